//! DLPack: host memory round trips, layouts and ownership without a GPU (foreign host buffers
//! need no driver); device buffers exported and imported on a real GPU. (Helpers and skip rules:
//! common/mod.rs.)

#[macro_use]
mod common;
use common::*;

use cucore::{sys, DLDevice, DLDeviceType, DLPackElement, DLPackLayout, DLPackTensor, LegacyDLPackTensor};

/// A host buffer over `host`, whose owner callback counts into `released`.
fn host_buffer(host: &mut [f32], released: &Arc<AtomicUsize>) -> Buffer {
    let counter = released.clone();
    let owner: cucore::OwnerCallback = Box::new(move || {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    // SAFETY: `host` outlives every buffer and tensor over it in these tests.
    unsafe { Buffer::from_handle(host.as_mut_ptr() as u64, (host.len() * 4) as u64, None, Some(owner)) }.unwrap()
}

/// A producer's tensor (as another library would hand one over), counting its deleter's calls.
struct Producer {
    tensor: sys::DLManagedTensorVersioned,
    data: Vec<f32>,
    shape: [i64; 2],
    deleted: AtomicUsize,
}

unsafe extern "C" fn producer_deleter(t: *mut sys::DLManagedTensorVersioned) {
    // SAFETY: manager_ctx is the Producer, alive for the whole test.
    unsafe { (*((*t).manager_ctx as *const Producer)).deleted.fetch_add(1, Ordering::SeqCst) };
}

fn producer() -> Box<Producer> {
    let mut p = Box::new(Producer {
        tensor: sys::DLManagedTensorVersioned {
            version: sys::DLPackVersion { major: 1, minor: 0 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(producer_deleter),
            flags: 0,
            dl_tensor: sys::DLTensor {
                data: std::ptr::null_mut(),
                device: sys::DLDevice { device_type: sys::kDLCPU, device_id: 0 },
                ndim: 2,
                dtype: f32::DTYPE,
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
        },
        data: (0..12).map(|i| i as f32 * 1.5).collect(),
        shape: [3, 4],
        deleted: AtomicUsize::new(0),
    });
    p.tensor.manager_ctx = &*p as *const Producer as *mut c_void;
    p.tensor.dl_tensor.data = p.data.as_mut_ptr() as *mut c_void;
    p.tensor.dl_tensor.shape = p.shape.as_mut_ptr();
    p
}

#[test]
fn host_memory_round_trips_without_a_gpu() {
    let _serial = serial();
    let buffers = live_object_count(ObjectType::Buffer).unwrap();
    let mut host: Vec<f32> = (0..64).map(|i| i as f32 + 0.5).collect();
    let base = host.as_ptr() as u64;
    let released = Arc::new(AtomicUsize::new(0));
    let buf = host_buffer(&mut host, &released);
    assert_eq!(buf.dlpack_device().unwrap(), DLDevice { device_type: DLDeviceType::Cpu, device_id: 0 });

    // The default: the buffer's bytes, 1-D uint8.
    let bytes = DLPackTensor::export(&buf, None).unwrap();
    assert_eq!(bytes.shape(), &[256]);
    assert_eq!(bytes.strides(), Some(&[1i64][..]));
    assert_eq!(bytes.dtype(), u8::DTYPE);
    assert_eq!(bytes.version().0, 1);
    assert_eq!(bytes.data() as u64, base);
    assert_eq!(bytes.device().device_type, DLDeviceType::Cpu);
    assert!(!bytes.is_read_only());

    // A read-only 4x8 float matrix 64 bytes in: floats 16..48.
    let layout = DLPackLayout::of::<f32>(&[4, 8]).byte_offset(64).read_only(true);
    let t = DLPackTensor::export(&buf, Some(&layout)).unwrap();
    assert_eq!((t.shape(), t.strides()), (&[4i64, 8][..], Some(&[8i64, 1][..])));
    assert!(t.is_read_only());
    assert_eq!(t.data() as u64, base + 64);
    // SAFETY: the tensor's 32 floats are host memory kept alive by `host`.
    let values = unsafe { std::slice::from_raw_parts(t.data() as *const f32, 32) };
    assert_eq!(values, &host[16..48]);

    // Imported back: the same memory, no copy, no resource.
    let imported = Buffer::from_dlpack(t).unwrap();
    assert_eq!(imported.address().unwrap(), base + 64);
    assert_eq!(imported.size().unwrap(), 128);
    assert_eq!(imported.device_id().unwrap(), None);
    assert!(imported.memory_resource().unwrap().is_none());

    // The original buffer goes; its memory stays for the tensors.
    drop(buf);
    assert_eq!(released.load(Ordering::SeqCst), 0);

    // Negative strides (columns reversed) from an offset, legacy: the span covers [0, 16).
    let reversed = DLPackLayout::of::<u32>(&[2, 2]).strides(&[2, -1]).byte_offset(4);
    let legacy = LegacyDLPackTensor::export(&imported, Some(&reversed)).unwrap();
    assert_eq!(legacy.data() as u64, base + 64 + 4);
    let again = Buffer::from_dlpack_legacy(legacy).unwrap();
    assert_eq!(again.address().unwrap(), base + 64);
    assert_eq!(again.size().unwrap(), 16);
    drop(imported);
    drop(again);
    assert_eq!(released.load(Ordering::SeqCst), 0, "the bytes tensor still holds the memory");
    drop(bytes); // Drop calls the deleter
    assert_eq!(released.load(Ordering::SeqCst), 1, "the owner is told once, after the last tensor");
    assert_eq!(live_object_count(ObjectType::Buffer).unwrap(), buffers);
}

#[test]
fn into_raw_hands_the_tensor_to_a_consumer() {
    let _serial = serial();
    let mut host = vec![0f32; 16];
    let released = Arc::new(AtomicUsize::new(0));
    let buf = host_buffer(&mut host, &released);
    let raw = DLPackTensor::export(&buf, None).unwrap().into_raw();
    drop(buf);
    assert_eq!(released.load(Ordering::SeqCst), 0, "into_raw did not free it");
    // The consumer calls the deleter (here: from another thread, as consumers may).
    let raw_addr = raw as usize;
    thread::spawn(move || {
        let raw = raw_addr as *mut sys::DLManagedTensorVersioned;
        // SAFETY: the consumer owns the tensor and frees it once.
        unsafe { ((*raw).deleter.expect("a deleter"))(raw) };
    })
    .join()
    .unwrap();
    assert_eq!(released.load(Ordering::SeqCst), 1);
}

#[test]
fn layout_and_import_errors() {
    let _serial = serial();
    let mut host = vec![0f32; 16];
    let released = Arc::new(AtomicUsize::new(0));
    let buf = host_buffer(&mut host, &released);
    let e = DLPackTensor::export(&buf, Some(&DLPackLayout::of::<f32>(&[5, 4]))).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains("outside the buffer"), "{}", e.message);
    let e = DLPackTensor::export(&buf, Some(&DLPackLayout::of::<f32>(&[2, 2]).strides(&[1]))).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    let e = DLPackTensor::export(&buf, Some(&DLPackLayout::of::<u8>(&[1; 33]))).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    let bad_dtype = sys::DLDataType { code: sys::kDLInt as u8, bits: 12, lanes: 1 };
    let e = LegacyDLPackTensor::export(&buf, Some(&DLPackLayout::new(bad_dtype, &[2]))).unwrap_err();
    assert!(e.message.contains("dtype.bits is 12"), "{}", e.message);
    buf.close(None).unwrap();
    let e = DLPackTensor::export(&buf, None).unwrap_err();
    assert_eq!(e.status, Status::InvalidState, "{}", e);

    // A failed raw import leaves the tensor with the caller.
    let mut p = producer();
    p.tensor.dl_tensor.dtype.bits = 4;
    // SAFETY: a valid tensor; the Producer outlives the buffer.
    let e = unsafe { Buffer::from_dlpack_raw(&mut p.tensor) }.unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    p.tensor.dl_tensor.device.device_type = 4; // kDLOpenCL
    p.tensor.dl_tensor.dtype.bits = 32;
    // SAFETY: as above.
    let e = unsafe { Buffer::from_dlpack_raw(&mut p.tensor) }.unwrap_err();
    assert_eq!(e.status, Status::NotSupported, "{}", e);
    assert_eq!(p.deleted.load(Ordering::SeqCst), 0);

    // A successful import: the deleter runs once, when the buffer and its views are gone.
    p.tensor.dl_tensor.device.device_type = sys::kDLCPU;
    // SAFETY: as above.
    let b = unsafe { Buffer::from_dlpack_raw(&mut p.tensor) }.unwrap();
    assert_eq!(b.address().unwrap(), p.data.as_ptr() as u64);
    assert_eq!(b.size().unwrap(), 48);
    let v = b.view(4, 8).unwrap();
    drop(b);
    assert_eq!(p.deleted.load(Ordering::SeqCst), 0);
    drop(v);
    assert_eq!(p.deleted.load(Ordering::SeqCst), 1);

    // The safe import of an owned tensor that fails drops (frees) it.
    p.tensor.version.major = 2;
    // SAFETY: the Producer outlives the tensor.
    let owned = unsafe { DLPackTensor::from_raw(&mut p.tensor) }.unwrap();
    let e = Buffer::from_dlpack(owned).unwrap_err();
    assert!(e.message.contains("version"), "{}", e.message);
    assert_eq!(p.deleted.load(Ordering::SeqCst), 2);
    drop(released);
}

#[test]
fn device_buffer_round_trips_as_a_2d_float_tensor() {
    let _serial = serial();
    let dev = require_gpu!("device_buffer_round_trips_as_a_2d_float_tensor");
    let _mr = require_pool!("device_buffer_round_trips_as_a_2d_float_tensor", &dev);
    let s = dev.create_stream(StreamOptions::default()).unwrap();
    const ROWS: usize = 32;
    const COLS: usize = 24;
    let values: Vec<f32> = (0..ROWS * COLS).map(|i| i as f32 * 0.25 - 9.0).collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let buf = dev.allocate(bytes.len() as u64, &s).unwrap();
    buf.copy_from_host(0, &bytes, &s).unwrap();
    assert_eq!(buf.dlpack_device().unwrap(), DLDevice { device_type: DLDeviceType::Cuda, device_id: 0 });

    let t = DLPackTensor::export(&buf, Some(&DLPackLayout::of::<f32>(&[ROWS as i64, COLS as i64]))).unwrap();
    assert_eq!(t.data() as u64, buf.address().unwrap());
    assert_eq!(t.device(), DLDevice { device_type: DLDeviceType::Cuda, device_id: 0 });
    assert_eq!(t.strides(), Some(&[COLS as i64, 1][..]));
    let imported = Buffer::from_dlpack(t).unwrap();
    assert_eq!(imported.address().unwrap(), buf.address().unwrap(), "zero-copy");
    assert_eq!(imported.device_id().unwrap(), Some(0));
    assert_eq!(imported.to_vec(&s).unwrap(), bytes, "read through the imported buffer");

    // Written through the import, read through the original; then the original is closed and
    // the import still reads the memory.
    let row: Vec<u8> = (0..COLS * 4).map(|i| i as u8).collect();
    imported.copy_from_host(4 * (COLS * 4) as u64, &row, &s).unwrap();
    let mut expected = bytes.clone();
    expected[4 * COLS * 4..5 * COLS * 4].copy_from_slice(&row);
    assert_eq!(buf.to_vec(&s).unwrap(), expected);
    buf.close(None).unwrap();
    assert_eq!(imported.to_vec(&s).unwrap(), expected, "the tensor keeps the closed buffer's memory");

    // A legacy export of a column (stride COLS): its span from the first to the last element.
    let column = DLPackLayout::of::<f32>(&[ROWS as i64]).strides(&[COLS as i64]).byte_offset(8);
    let legacy = LegacyDLPackTensor::export(&imported, Some(&column)).unwrap();
    let span = Buffer::from_dlpack_legacy(legacy).unwrap();
    assert_eq!(span.address().unwrap(), imported.address().unwrap() + 8);
    assert_eq!(span.size().unwrap(), (((ROWS - 1) * COLS + 1) * 4) as u64);
    let got = span.to_vec(&s).unwrap();
    for r in 0..ROWS {
        assert_eq!(&got[r * COLS * 4..r * COLS * 4 + 4], &expected[8 + r * COLS * 4..12 + r * COLS * 4], "row {}", r);
    }
    s.synchronize().unwrap();
}
