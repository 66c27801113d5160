//! Arrays and mipmapped arrays (`cucore::opaque_array`) on a GPU: every kind's description and
//! packed layout, every format and channel count round-tripping bit-exact through host slices,
//! buffers and other arrays, typed slices, region copies (tiles, layers, buffers with a pitch,
//! host slices checked against their length), the size and shape errors, close and use after
//! close, mipmapped levels, wrapping a foreign `CUarray`, and no leaks. Without a driver or a
//! device each test prints "skipped: <test>: <reason>" and passes (common/mod.rs). The tests run
//! one at a time (common::serial): they compare process-wide live-object counts.

#[macro_use]
mod common;
use common::*;

use cucore::{
    ArrayFlags, ArrayFormat, ArrayKind, ArrayRegion, Extent3D, MemoryRegion, MipmappedArray, OpaqueArray,
    OpaqueArrayInfo, OpaqueArrayOptions,
};

fn new_stream(dev: &Device) -> Stream {
    dev.create_stream(StreamOptions::default()).expect("create_stream")
}

fn options(format: ArrayFormat, channels: u32, width: u64, height: u64) -> OpaqueArrayOptions {
    OpaqueArrayOptions::default().format(format).num_channels(channels).width(width).height(height)
}

fn create(dev: &Device, o: OpaqueArrayOptions) -> OpaqueArray {
    dev.create_opaque_array(o).unwrap_or_else(|e| panic!("create_opaque_array({:?}): {}", o, e))
}

/// The live arrays, mipmapped arrays and buffers.
fn live_arrays() -> [usize; 3] {
    [
        live_object_count(ObjectType::OpaqueArray).unwrap(),
        live_object_count(ObjectType::MipmappedArray).unwrap(),
        live_object_count(ObjectType::Buffer).unwrap(),
    ]
}

/// Asserts equal bytes, naming the first difference (not printing megabytes).
fn assert_same(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{}: lengths differ", what);
    if let Some(i) = got.iter().zip(want).position(|(g, w)| g != w) {
        panic!("{}: byte {} is {:#04x}, expected {:#04x}", what, i, got[i], want[i]);
    }
}

// ---- Descriptions ------------------------------------------------------------------------------------

#[test]
fn every_kind_describes_its_packed_layout() {
    let _serial = serial();
    let dev = require_gpu!("every_kind_describes_its_packed_layout");
    let before = live_arrays();
    // (kind, width, height, depth, layers) -> (row_count, slice_count)
    let f = ArrayFormat::Float32;
    let cases: [(ArrayKind, u64, u64, u64, u64, u64, u64); 7] = [
        (ArrayKind::Plain, 100, 0, 0, 0, 1, 1),         // 1D
        (ArrayKind::Plain, 100, 30, 0, 0, 30, 1),       // 2D
        (ArrayKind::Plain, 20, 10, 5, 0, 10, 5),        // 3D
        (ArrayKind::Layered, 64, 0, 0, 7, 1, 7),        // 1D layers
        (ArrayKind::Layered, 16, 8, 0, 3, 8, 3),        // 2D layers
        (ArrayKind::Cubemap, 16, 16, 0, 0, 16, 6),      // six faces
        (ArrayKind::LayeredCubemap, 8, 8, 0, 2, 8, 12), // two cubemaps
    ];
    for &(kind, w, h, d, layers, rows, slices) in &cases {
        let o = options(f, 2, w, h).kind(kind).depth(d).layers(layers).flags(ArrayFlags::SURFACE_LOAD_STORE);
        let array = create(&dev, o);
        let i = array.info().unwrap();
        let what = format!("{:?} {}x{}x{} layers {}", kind, w, h, d, layers);
        assert_eq!((i.format, i.num_channels, i.element_size), (f, 2, 8), "{}", what);
        assert_eq!(i.kind, kind, "{}", what);
        assert_eq!((i.width, i.height, i.depth, i.layers), (w, h, d, layers), "{}", what);
        assert!(i.is_surface_load_store(), "{}", what);
        assert_eq!((i.row_bytes, i.row_count, i.slice_count), (w * 8, rows, slices), "{}", what);
        assert_eq!(i.size_bytes, w * 8 * rows * slices, "{}", what);
        assert_eq!((i.device_ordinal, i.is_owned, i.num_levels), (dev.ordinal().unwrap(), true, 1), "{}", what);
        assert!(!array.handle().unwrap().is_null());
        assert_eq!(array.device().unwrap(), dev);
        assert!(format!("{:?}", array).contains("float32"), "{:?}", array);
    }
    // The formats that name their channel count take 0 for it.
    let i = create(&dev, options(ArrayFormat::UnormInt8x4, 0, 4, 4)).info().unwrap();
    assert_eq!((i.num_channels, i.element_size), (4, 4));
    let i = create(&dev, options(ArrayFormat::Bc6hUf16, 0, 10, 6)).info().unwrap();
    assert_eq!((i.num_channels, i.element_size), (3, 16));
    assert_eq!((i.row_bytes, i.row_count, i.size_bytes), (3 * 16, 2, 3 * 16 * 2), "BC: rows of 4x4 blocks");
    // Plain formats: 0 channels is 1.
    assert_eq!(create(&dev, options(ArrayFormat::Int16, 0, 4, 0)).info().unwrap().num_channels, 1);
    assert_eq!(live_arrays(), before, "every array went with its last reference");
}

// ---- Whole-array copies ---------------------------------------------------------------------------------

/// (format, channels asked for, channels expected, element size expected) for every format the
/// H100's driver takes in a 2D array (measured: 3 channels only for BC6H; normalized, BC and
/// 101010_2 formats with their own count).
fn every_format() -> Vec<(ArrayFormat, u32, u32, u32)> {
    let mut v = Vec::new();
    for (f, size) in [
        (ArrayFormat::Uint8, 1),
        (ArrayFormat::Uint16, 2),
        (ArrayFormat::Uint32, 4),
        (ArrayFormat::Int8, 1),
        (ArrayFormat::Int16, 2),
        (ArrayFormat::Int32, 4),
        (ArrayFormat::Float16, 2),
        (ArrayFormat::Float32, 4),
    ] {
        for channels in [1u32, 2, 4] {
            v.push((f, channels, channels, size * channels));
        }
    }
    for (f, channels, size) in [
        (ArrayFormat::UnormInt8x1, 1, 1),
        (ArrayFormat::UnormInt8x2, 2, 2),
        (ArrayFormat::UnormInt8x4, 4, 4),
        (ArrayFormat::UnormInt16x1, 1, 2),
        (ArrayFormat::UnormInt16x2, 2, 4),
        (ArrayFormat::UnormInt16x4, 4, 8),
        (ArrayFormat::SnormInt8x1, 1, 1),
        (ArrayFormat::SnormInt8x2, 2, 2),
        (ArrayFormat::SnormInt8x4, 4, 4),
        (ArrayFormat::SnormInt16x1, 1, 2),
        (ArrayFormat::SnormInt16x2, 2, 4),
        (ArrayFormat::SnormInt16x4, 4, 8),
        (ArrayFormat::UnormInt101010_2, 4, 4),
        (ArrayFormat::Bc1Unorm, 4, 8),
        (ArrayFormat::Bc1UnormSrgb, 4, 8),
        (ArrayFormat::Bc2Unorm, 4, 16),
        (ArrayFormat::Bc2UnormSrgb, 4, 16),
        (ArrayFormat::Bc3Unorm, 4, 16),
        (ArrayFormat::Bc3UnormSrgb, 4, 16),
        (ArrayFormat::Bc4Unorm, 1, 8),
        (ArrayFormat::Bc4Snorm, 1, 8),
        (ArrayFormat::Bc5Unorm, 2, 16),
        (ArrayFormat::Bc5Snorm, 2, 16),
        (ArrayFormat::Bc6hUf16, 3, 16),
        (ArrayFormat::Bc6hSf16, 3, 16),
        (ArrayFormat::Bc7Unorm, 4, 16),
        (ArrayFormat::Bc7UnormSrgb, 4, 16),
    ] {
        v.push((f, 0, channels, size));
    }
    v
}

#[test]
fn every_format_and_channel_count_round_trips_bit_exact() {
    let _serial = serial();
    let dev = require_gpu!("every_format_and_channel_count_round_trips_bit_exact");
    let stream = new_stream(&dev);
    let before = live_arrays();
    let formats = every_format();
    assert_eq!(formats.len(), 24 + 27);
    // Every format of the header is covered.
    for f in ArrayFormat::all() {
        assert!(formats.iter().any(|(g, ..)| g == f), "{} is not tested", f);
    }
    const W: u64 = 13; // not a multiple of 4: BC rows end in a partial block
    const H: u64 = 7;
    for (seed, &(format, channels, want_channels, want_size)) in formats.iter().enumerate() {
        let what = format!("{} x{}", format, want_channels);
        let a = create(&dev, options(format, channels, W, H));
        let i = a.info().unwrap();
        assert_eq!((i.format, i.num_channels, i.element_size), (format, want_channels, want_size), "{}", what);
        let (row_bytes, rows) = if format.is_block_compressed() {
            ((W + 3) / 4 * u64::from(want_size), (H + 3) / 4)
        } else {
            (W * u64::from(want_size), H)
        };
        assert_eq!((i.row_bytes, i.row_count, i.slice_count), (row_bytes, rows, 1), "{}", what);
        assert_eq!(i.size_bytes, row_bytes * rows, "{}", what);
        let data = pattern(i.size_bytes as usize, seed as u8);

        // Host -> array -> host.
        a.copy_from_host(&data, &stream).unwrap();
        assert_same(&a.to_vec(&stream).unwrap(), &data, &format!("{}: host round trip", what));
        // Array -> buffer -> array -> host.
        let buffer = dev.allocate(i.size_bytes, &stream).unwrap();
        a.copy_to_buffer(&buffer, &stream).unwrap();
        assert_same(&buffer.to_vec(&stream).unwrap(), &data, &format!("{}: copy_to_buffer", what));
        let b = create(&dev, options(format, channels, W, H));
        b.copy_from_buffer(&buffer, &stream).unwrap();
        let mut out = vec![0u8; data.len()];
        b.copy_to_host(&mut out, &stream).unwrap();
        assert_same(&out, &data, &format!("{}: copy_from_buffer", what));
        // Array -> array, both directions.
        let c = create(&dev, options(format, channels, W, H));
        c.copy_from_array(&b, &stream).unwrap();
        assert_same(&c.to_vec(&stream).unwrap(), &data, &format!("{}: copy_from_array", what));
        a.copy_from_host(&vec![0u8; data.len()], &stream).unwrap();
        c.copy_to_array(&a, &stream).unwrap();
        assert_same(&a.to_vec(&stream).unwrap(), &data, &format!("{}: copy_to_array", what));
    }
    assert_eq!(live_arrays(), before);
}

#[test]
fn typed_slices_and_longer_slices() {
    let _serial = serial();
    let dev = require_gpu!("typed_slices_and_longer_slices");
    let stream = new_stream(&dev);
    // 8 x 4 float2: 64 floats.
    let a = create(&dev, options(ArrayFormat::Float32, 2, 8, 4));
    let floats: Vec<f32> = (0..64).map(|i| i as f32 * 0.5 - 3.0).collect();
    a.copy_from_host(&floats, &stream).unwrap();
    let mut back = vec![0f32; 64];
    a.copy_to_host(&mut back, &stream).unwrap();
    assert_eq!(back, floats);
    // Read as u32 words and as [u8; 8] elements: the same bytes.
    let mut words = vec![0u32; 64];
    a.copy_to_host(&mut words, &stream).unwrap();
    assert_eq!(words, floats.iter().map(|f| f.to_bits()).collect::<Vec<u32>>());
    let mut elements = vec![[0u8; 8]; 32];
    a.copy_to_host(&mut elements, &stream).unwrap();
    assert_eq!(elements.concat(), f32_bytes(&floats));
    // A longer destination keeps the bytes past the array; a longer source is read in part.
    let mut longer = vec![-1.0f32; 70];
    a.copy_to_host(&mut longer, &stream).unwrap();
    assert_eq!(&longer[..64], &floats[..]);
    assert_eq!(&longer[64..], &[-1.0f32; 6]);
    let mut source: Vec<f32> = (0..80).map(|i| i as f32).collect();
    a.copy_from_host(&source, &stream).unwrap();
    source.truncate(64);
    assert_eq!(f32s(&a.to_vec(&stream).unwrap()), source);
    // The asynchronous twins with a stream synchronize of our own.
    let mut out = vec![0f32; 64];
    // SAFETY: both slices live and are untouched until the synchronize below.
    unsafe {
        a.copy_from_host_async(&floats, &stream).unwrap();
        a.copy_to_host_async(&mut out, &stream).unwrap();
    }
    stream.synchronize().unwrap();
    assert_eq!(out, floats);
}

#[test]
fn short_slices_buffers_and_other_layouts_are_refused() {
    let _serial = serial();
    let dev = require_gpu!("short_slices_buffers_and_other_layouts_are_refused");
    let stream = new_stream(&dev);
    let a = create(&dev, options(ArrayFormat::Uint16, 4, 10, 3)); // 240 bytes
    assert_eq!(a.info().unwrap().size_bytes, 240);
    let data = pattern(240, 3);
    a.copy_from_host(&data, &stream).unwrap();
    let names_both = |e: &cucore::Error| e.message.contains("240") && e.message.contains("239");

    let e = a.copy_from_host(&data[..239], &stream).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(names_both(&e), "names both sizes: {}", e);
    let mut short = vec![0xeeu8; 239];
    let e = a.copy_to_host(&mut short, &stream).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(names_both(&e), "names both sizes: {}", e);
    assert_eq!(short, vec![0xeeu8; 239], "a refused copy writes nothing");
    let e = a.copy_from_host::<u8>(&[], &stream).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);

    let small = dev.allocate(239, &stream).unwrap();
    for e in [a.copy_from_buffer(&small, &stream).unwrap_err(), a.copy_to_buffer(&small, &stream).unwrap_err()] {
        assert_eq!(e.status, Status::InvalidArgument, "{}", e);
        assert!(names_both(&e), "names both sizes: {}", e);
    }
    // Arrays of another layout: another width, another element size, another slice count.
    for other in [
        options(ArrayFormat::Uint16, 4, 11, 3),
        options(ArrayFormat::Uint16, 2, 10, 3),
        options(ArrayFormat::Uint16, 4, 10, 3).kind(ArrayKind::Layered).layers(2),
    ] {
        let b = create(&dev, other);
        let e = a.copy_from_array(&b, &stream).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{:?}: {}", other, e);
        assert_eq!(b.copy_from_array(&a, &stream).unwrap_err().status, Status::InvalidArgument);
    }
    // Nothing above changed the array.
    assert_same(&a.to_vec(&stream).unwrap(), &data, "after the refused copies");
}

// ---- Shapes and options that are refused ---------------------------------------------------------------

#[test]
fn bad_formats_channels_shapes_and_limits_are_refused() {
    let _serial = serial();
    let dev = require_gpu!("bad_formats_channels_shapes_and_limits_are_refused");
    let before = live_arrays();
    let f = ArrayFormat::Float32;
    let max_1d = dev.attribute(DeviceAttribute::MAXIMUM_TEXTURE1D_WIDTH).unwrap() as u64;
    let cases: Vec<(&str, OpaqueArrayOptions)> = vec![
        ("no format", OpaqueArrayOptions::default().width(4).height(4)),
        ("an unknown format", options(ArrayFormat::Unknown(0x77), 1, 4, 4)),
        ("a YUV format", options(ArrayFormat::Unknown(0xb0), 1, 4, 4)),
        ("width 0", options(f, 1, 0, 4)),
        ("3 float channels", options(f, 3, 4, 4)),
        ("5 channels", options(f, 5, 4, 4)),
        ("2 channels of a 4-channel format", options(ArrayFormat::UnormInt8x4, 2, 4, 4)),
        ("depth without height", options(f, 1, 4, 0).depth(4)),
        ("layers on a plain array", options(f, 1, 4, 4).layers(2)),
        ("a layered array without layers", options(f, 1, 4, 4).kind(ArrayKind::Layered)),
        ("a layered array with depth", options(f, 1, 4, 4).kind(ArrayKind::Layered).layers(2).depth(2)),
        ("a cubemap that is not square", options(f, 1, 8, 4).kind(ArrayKind::Cubemap)),
        ("a cubemap with layers", options(f, 1, 8, 8).kind(ArrayKind::Cubemap).layers(2)),
        ("a layered cubemap without layers", options(f, 1, 8, 8).kind(ArrayKind::LayeredCubemap)),
        ("an unknown kind", options(f, 1, 4, 4).kind(ArrayKind::Unknown(9))),
        ("a 1D BC array", options(ArrayFormat::Bc1Unorm, 0, 16, 0)),
        ("BC with surface load/store", options(ArrayFormat::Bc7Unorm, 0, 16, 16).flags(ArrayFlags::SURFACE_LOAD_STORE)),
        ("above the 1D limit", options(f, 1, max_1d + 1, 0)),
    ];
    for (what, o) in &cases {
        let e = dev.create_opaque_array(*o).expect_err(what);
        assert_eq!(e.status, Status::InvalidArgument, "{}: {}", what, e);
        assert!(!e.message.is_empty(), "{}", what);
        let e = dev.create_mipmapped_array(*o, 1).expect_err(what);
        assert_eq!(e.status, Status::InvalidArgument, "mipmapped, {}: {}", what, e);
    }
    // Unknown flag bits (the safe type cannot make them; the C ABI refuses them).
    let mut raw = options(f, 1, 4, 4).to_raw();
    raw.flags = 0x100;
    let mut out: *mut cucore::sys::cucore_opaque_array_t = std::ptr::null_mut();
    // SAFETY: a live device, valid options and out-pointer.
    let status = unsafe { cucore::sys::cucore_opaque_array_create(dev.as_raw(), &raw, &mut out) };
    assert_eq!(status, cucore::sys::CUCORE_ERROR_INVALID_ARGUMENT);
    assert!(out.is_null());
    let e = dev.create_opaque_array(options(f, 1, max_1d + 1, 0)).unwrap_err();
    assert!(e.message.contains(&max_1d.to_string()), "names the limit {}: {}", max_1d, e);
    // The limit itself is fine.
    create(&dev, options(ArrayFormat::Uint8, 1, max_1d, 0));
    assert_eq!(live_arrays(), before, "refused creates leave nothing behind");
}

// ---- Region copies --------------------------------------------------------------------------------------

#[test]
fn region_copies_between_arrays_buffers_and_host_slices() {
    let _serial = serial();
    let dev = require_gpu!("region_copies_between_arrays_buffers_and_host_slices");
    let stream = new_stream(&dev);
    // A 16 x 8 array of u32, element (x, y) = y * 100 + x.
    const W: u64 = 16;
    const H: u64 = 8;
    let value = |x: u64, y: u64| (y * 100 + x) as u32;
    let whole: Vec<u32> = (0..H).flat_map(|y| (0..W).map(move |x| value(x, y))).collect();
    let a = create(&dev, options(ArrayFormat::Uint32, 1, W, H));
    a.copy_from_host(&whole, &stream).unwrap();

    // Array -> host: a 5 x 3 tile at (4, 2), into rows of 8 words (pitch 32 bytes) at byte 4.
    let mut tile = vec![0u8; 4 + 3 * 32];
    OpaqueArray::copy(
        MemoryRegion::host_mut(&mut tile, 32).offset(4),
        ArrayRegion::new(&a).at(4, 2, 0),
        Extent3D::new_2d(5, 3),
        &stream,
    )
    .unwrap();
    for row in 0..3u64 {
        let start = 4 + row as usize * 32;
        let got = u32s(&tile[start..start + 20]);
        let want: Vec<u32> = (0..5).map(|x| value(4 + x, 2 + row)).collect();
        assert_eq!(got, want, "tile row {}", row);
        assert!(
            tile[start + 20..(start + 32).min(tile.len())].iter().all(|&b| b == 0),
            "the pitch's rest is untouched"
        );
    }
    // Pitch 0 and height 0: the tile packed.
    let mut packed = vec![0u8; 5 * 3 * 4];
    OpaqueArray::copy(
        MemoryRegion::host_mut(&mut packed, 0),
        ArrayRegion::new(&a).at(4, 2, 0),
        Extent3D::new_2d(5, 3),
        &stream,
    )
    .unwrap();
    let want: Vec<u32> = (0..3).flat_map(|y| (0..5).map(move |x| value(4 + x, 2 + y))).collect();
    assert_eq!(u32s(&packed), want);

    // Host -> array: a 2 x 2 patch at (14, 6), the bottom-right corner.
    let patch = [7u32, 8, 9, 10];
    let patch_bytes: Vec<u8> = patch.iter().flat_map(|w| w.to_ne_bytes()).collect();
    OpaqueArray::copy(
        ArrayRegion::new(&a).at(14, 6, 0),
        MemoryRegion::host(&patch_bytes, 8),
        Extent3D::new_2d(2, 2),
        &stream,
    )
    .unwrap();
    let mut expected = whole.clone();
    expected[(6 * W + 14) as usize] = 7;
    expected[(6 * W + 15) as usize] = 8;
    expected[(7 * W + 14) as usize] = 9;
    expected[(7 * W + 15) as usize] = 10;
    assert_eq!(u32s(&a.to_vec(&stream).unwrap()), expected);

    // Array -> array: row 0's first 6 elements into a 1D array at element 3.
    let line = create(&dev, options(ArrayFormat::Uint32, 1, 12, 0));
    line.copy_from_host(&[0u32; 12], &stream).unwrap();
    OpaqueArray::copy(ArrayRegion::new(&line).at(3, 0, 0), &a, Extent3D::new_2d(6, 1), &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(u32s(&line.to_vec(&stream).unwrap()), vec![0, 0, 0, 0, 1, 2, 3, 4, 5, 0, 0, 0]);

    // Buffer <-> array with a pitch: the whole array into a buffer of 80-byte rows, and back
    // into a second array.
    let pitched = dev.allocate(80 * H, &stream).unwrap();
    pitched.fill(0, 1, &stream).unwrap();
    OpaqueArray::copy(MemoryRegion::buffer(&pitched, 80), &a, Extent3D::new_2d(W, H), &stream).unwrap();
    let bytes = pitched.to_vec(&stream).unwrap();
    for y in 0..H as usize {
        assert_eq!(
            u32s(&bytes[y * 80..y * 80 + 64]),
            expected[y * W as usize..(y + 1) * W as usize].to_vec(),
            "row {}",
            y
        );
    }
    let b = create(&dev, options(ArrayFormat::Uint32, 1, W, H));
    OpaqueArray::copy(&b, MemoryRegion::buffer(&pitched, 80), Extent3D::new_2d(W, H), &stream).unwrap();
    assert_eq!(u32s(&b.to_vec(&stream).unwrap()), expected);
}

#[test]
fn region_copies_reach_layers_slices_and_faces() {
    let _serial = serial();
    let dev = require_gpu!("region_copies_reach_layers_slices_and_faces");
    let stream = new_stream(&dev);
    // A layered 4 x 2 array of 3 layers, a 3D 4 x 2 x 3 array and a cubemap of 4 x 4 faces:
    // each slice (layer, z slice, face) filled with its own bytes through a region copy at z.
    for (what, o, slices) in [
        ("layered", options(ArrayFormat::Uint8, 1, 4, 2).kind(ArrayKind::Layered).layers(3), 3u64),
        ("3D", options(ArrayFormat::Uint8, 1, 4, 2).depth(3), 3),
        ("cubemap", options(ArrayFormat::Uint8, 1, 4, 4).kind(ArrayKind::Cubemap), 6),
    ] {
        let a = create(&dev, o);
        let i = a.info().unwrap();
        let slice_bytes = (i.row_bytes * i.row_count) as usize;
        assert_eq!(i.slice_count, slices, "{}", what);
        for z in 0..slices {
            let fill = vec![0x10 + z as u8; slice_bytes];
            OpaqueArray::copy(
                ArrayRegion::new(&a).at(0, 0, z),
                MemoryRegion::host(&fill, 0),
                Extent3D::new_3d(i.width, i.row_count, 1),
                &stream,
            )
            .unwrap();
        }
        let all = a.to_vec(&stream).unwrap();
        for z in 0..slices as usize {
            assert!(
                all[z * slice_bytes..(z + 1) * slice_bytes].iter().all(|&b| b == 0x10 + z as u8),
                "{} slice {}",
                what,
                z
            );
        }
        // Slices 1.. read back in one 3D copy with a slice height of 0 (the rows copied).
        let mut out = vec![0u8; slice_bytes * (slices as usize - 1)];
        OpaqueArray::copy(
            MemoryRegion::host_mut(&mut out, 0),
            ArrayRegion::new(&a).at(0, 0, 1),
            Extent3D::new_3d(i.width, i.row_count, slices - 1),
            &stream,
        )
        .unwrap();
        assert_same(&out, &all[slice_bytes..], what);
        // One slice past the end is refused by the library.
        let mut one = vec![0u8; slice_bytes];
        let e = OpaqueArray::copy(
            MemoryRegion::host_mut(&mut one, 0),
            ArrayRegion::new(&a).at(0, 0, slices),
            Extent3D::new_3d(i.width, i.row_count, 1),
            &stream,
        )
        .unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{}: {}", what, e);
    }
}

#[test]
fn region_copies_are_checked() {
    let _serial = serial();
    let dev = require_gpu!("region_copies_are_checked");
    let stream = new_stream(&dev);
    let a = create(&dev, options(ArrayFormat::Float32, 1, 8, 4)); // 32-byte rows
    a.copy_from_host(&[1.5f32; 32], &stream).unwrap();
    let b = create(&dev, options(ArrayFormat::Uint16, 1, 8, 4)); // another element size

    // A host slice one byte short of what the copy touches is refused here, before any call:
    // 3 rows of 32 bytes at a pitch of 40 end at 2 * 40 + 32 = 112.
    let mut host = vec![0u8; 111];
    let e = OpaqueArray::copy(MemoryRegion::host_mut(&mut host, 40), &a, Extent3D::new_2d(8, 3), &stream).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains("past the end"), "{}", e);
    assert!(host.iter().all(|&b| b == 0), "nothing was written");
    let mut host = vec![0u8; 112];
    OpaqueArray::copy(MemoryRegion::host_mut(&mut host, 40), &a, Extent3D::new_2d(8, 3), &stream).unwrap();
    assert_eq!(f32s(&host[80..112]), vec![1.5f32; 8]);
    // A source slice too: packed rows of 8 floats, 4 rows, from byte 1.
    let src = vec![0u8; 128];
    let e = OpaqueArray::copy(&a, MemoryRegion::host(&src, 0).offset(1), Extent3D::new_2d(8, 4), &stream).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    // A pitch below the row: refused.
    let e = OpaqueArray::copy(&a, MemoryRegion::host(&src, 16), Extent3D::new_2d(8, 1), &stream).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);

    // The library's checks: outside the array, zero extents, element sizes that differ, more
    // than one row of a 1D array, a buffer too small.
    let mut big = vec![0u8; 4096];
    for (what, x, y, extent) in [
        ("x + width past the row", 1u64, 0u64, Extent3D::new_2d(8, 1)),
        ("y + rows past the array", 0, 2, Extent3D::new_2d(8, 3)),
        ("a zero width", 0, 0, Extent3D::new_2d(0, 1)),
        ("a second slice of a 2D array", 0, 0, Extent3D::new_3d(8, 4, 2)),
    ] {
        let e =
            OpaqueArray::copy(MemoryRegion::host_mut(&mut big, 0), ArrayRegion::new(&a).at(x, y, 0), extent, &stream)
                .unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{}: {}", what, e);
    }
    let e = OpaqueArray::copy(&b, &a, Extent3D::new_2d(8, 4), &stream).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "element sizes differ: {}", e);
    let line = create(&dev, options(ArrayFormat::Float32, 1, 8, 0));
    let e = OpaqueArray::copy(&line, &a, Extent3D::new_2d(8, 2), &stream).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "two rows into a 1D array: {}", e);
    let small = dev.allocate(127, &stream).unwrap();
    let e = OpaqueArray::copy(MemoryRegion::buffer(&small, 0), &a, Extent3D::new_2d(8, 4), &stream).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "a buffer one byte short: {}", e);
    // BC: offsets and extents on the 4x4 grid (an extent may end at the edge).
    let bc = create(&dev, options(ArrayFormat::Bc1Unorm, 0, 10, 8));
    let blocks = vec![0x5au8; 3 * 2 * 8];
    OpaqueArray::copy(&bc, MemoryRegion::host(&blocks, 0), Extent3D::new_2d(10, 8), &stream).unwrap();
    assert_same(&bc.to_vec(&stream).unwrap(), &blocks, "BC, the whole array by region");
    let e = OpaqueArray::copy(
        ArrayRegion::new(&bc).at(2, 0, 0),
        MemoryRegion::host(&blocks, 0),
        Extent3D::new_2d(4, 4),
        &stream,
    )
    .unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "BC x off the grid: {}", e);
    let e = OpaqueArray::copy(&bc, MemoryRegion::host(&blocks, 0), Extent3D::new_2d(6, 4), &stream).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "BC width off the grid: {}", e);
    assert_same(&bc.to_vec(&stream).unwrap(), &blocks, "the refused BC copies changed nothing");
}

// ---- Close, lifetimes, levels, foreign arrays -------------------------------------------------------

#[test]
fn close_is_idempotent_and_later_calls_are_invalid_state() {
    let _serial = serial();
    let dev = require_gpu!("close_is_idempotent_and_later_calls_are_invalid_state");
    let stream = new_stream(&dev);
    let before = live_arrays();
    let a = create(&dev, options(ArrayFormat::Uint8, 4, 8, 8));
    let twin = a.clone();
    assert_eq!(a, twin);
    let other = create(&dev, options(ArrayFormat::Uint8, 4, 8, 8));
    assert_ne!(a, other);
    let buffer = dev.allocate(256, &stream).unwrap();
    a.close().unwrap();
    a.close().unwrap();
    twin.close().unwrap();
    let state = |r: cucore::Result<()>, what: &str| {
        let e = r.expect_err(what);
        assert_eq!(e.status, Status::InvalidState, "{}: {}", what, e);
        assert!(!e.message.is_empty());
    };
    state(twin.info().map(|_| ()), "info");
    state(twin.handle().map(|_| ()), "handle");
    state(a.to_vec(&stream).map(|_| ()), "to_vec");
    state(a.copy_from_host(&[0u8; 256], &stream), "copy_from_host");
    state(a.copy_to_host(&mut [0u8; 256], &stream), "copy_to_host");
    state(a.copy_from_buffer(&buffer, &stream), "copy_from_buffer");
    state(a.copy_to_buffer(&buffer, &stream), "copy_to_buffer");
    state(a.copy_from_array(&other, &stream), "copy_from_array");
    state(other.copy_from_array(&a, &stream), "copy_from_array of a closed source");
    state(OpaqueArray::copy(&other, &a, Extent3D::new_2d(8, 8), &stream), "region copy from a closed array");
    state(OpaqueArray::copy(&a, &other, Extent3D::new_2d(8, 8), &stream), "region copy into a closed array");
    assert!(format!("{:?}", a).starts_with("OpaqueArray(<closed"), "{:?}", a);
    // Closed, it is still counted until its last reference goes.
    assert_eq!(live_object_count(ObjectType::OpaqueArray).unwrap(), before[0] + 2);
    drop((a, twin, other, buffer));
    assert_eq!(live_arrays(), before);
}

#[test]
fn mipmapped_levels_keep_their_array_alive() {
    let _serial = serial();
    let dev = require_gpu!("mipmapped_levels_keep_their_array_alive");
    let stream = new_stream(&dev);
    let before = live_arrays();
    let o = options(ArrayFormat::Float32, 1, 16, 8);
    // 1 + floor(log2(16)) = 5 levels at most.
    let e = dev.create_mipmapped_array(o, 6).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains('5'), "names the maximum: {}", e);
    assert_eq!(dev.create_mipmapped_array(o, 0).unwrap_err().status, Status::InvalidArgument);
    let m = dev.create_mipmapped_array(o, 5).unwrap();
    let i = m.info().unwrap();
    assert_eq!((i.format, i.width, i.height, i.num_levels, i.is_owned), (ArrayFormat::Float32, 16, 8, 5, true));
    assert_eq!(m.num_levels().unwrap(), 5);
    assert!(!m.handle().unwrap().is_null());
    let levels: Vec<OpaqueArray> = (0..5).map(|l| m.level(l).unwrap()).collect();
    for (l, level) in levels.iter().enumerate() {
        let i = level.info().unwrap();
        assert_eq!((i.width, i.height), ((16u64 >> l).max(1), (8u64 >> l).max(1)), "level {}", l);
        assert!(!i.is_owned, "a level belongs to its mipmapped array");
        let data: Vec<f32> = (0..i.width * i.height).map(|k| (l * 1000) as f32 + k as f32).collect();
        level.copy_from_host(&data, &stream).unwrap();
    }
    let e = m.level(5).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains('5'), "names the count: {}", e);
    // The mipmapped array goes (closed and dropped); its levels still hold their data.
    m.close().unwrap();
    assert_eq!(m.info().unwrap_err().status, Status::InvalidState);
    assert_eq!(m.level(0).unwrap_err().status, Status::InvalidState);
    drop(m);
    for (l, level) in levels.iter().enumerate().rev() {
        let i = level.info().unwrap();
        let want: Vec<f32> = (0..i.width * i.height).map(|k| (l * 1000) as f32 + k as f32).collect();
        assert_eq!(f32s(&level.to_vec(&stream).unwrap()), want, "level {} after its array was closed", l);
    }
    drop(levels);
    assert_eq!(live_arrays(), before);
}

#[test]
fn foreign_arrays_are_wrapped_without_ownership() {
    let _serial = serial();
    let dev = require_gpu!("foreign_arrays_are_wrapped_without_ownership");
    let stream = new_stream(&dev);
    let before = live_arrays();
    let owner = create(&dev, options(ArrayFormat::Int16, 2, 6, 5).kind(ArrayKind::Layered).layers(2));
    let released = Arc::new(AtomicUsize::new(0));
    let counter = released.clone();
    // SAFETY: `owner` keeps the CUarray alive until after the wrapper is dropped below.
    let wrapped = unsafe {
        OpaqueArray::from_handle(
            &dev,
            owner.handle().unwrap(),
            Some(Box::new(move || {
                counter.fetch_add(1, Ordering::SeqCst);
            })),
        )
    }
    .unwrap();
    let (a, w): (OpaqueArrayInfo, OpaqueArrayInfo) = (owner.info().unwrap(), wrapped.info().unwrap());
    assert_eq!((w.format, w.num_channels, w.kind), (a.format, a.num_channels, a.kind));
    assert_eq!(
        (w.width, w.height, w.depth, w.layers, w.size_bytes),
        (a.width, a.height, a.depth, a.layers, a.size_bytes)
    );
    assert!(!w.is_owned && a.is_owned);
    assert_eq!(wrapped.handle().unwrap(), owner.handle().unwrap());
    let data = pattern(a.size_bytes as usize, 77);
    wrapped.copy_from_host(&data, &stream).unwrap();
    assert_same(&owner.to_vec(&stream).unwrap(), &data, "written through the wrapper, read through the owner");
    let twin = wrapped.clone();
    drop(wrapped);
    assert_eq!(released.load(Ordering::SeqCst), 0, "a clone still holds it");
    drop(twin);
    assert_eq!(released.load(Ordering::SeqCst), 1, "the owner callback ran once, at the last release");
    assert_same(&owner.to_vec(&stream).unwrap(), &data, "the CUarray itself was not destroyed");

    // A mipmapped array too.
    let m = dev.create_mipmapped_array(options(ArrayFormat::Uint8, 1, 8, 8), 3).unwrap();
    // SAFETY: `m` outlives the wrapper.
    let wm = unsafe { MipmappedArray::from_handle(&dev, m.handle().unwrap(), None) }.unwrap();
    let i = wm.info().unwrap();
    assert_eq!((i.num_levels, i.width, i.height, i.is_owned), (3, 8, 8, false));
    assert_eq!(wm.level(2).unwrap().info().unwrap().width, 2);
    drop((wm, m, owner));
    assert_eq!(live_arrays(), before);
}

#[test]
fn arrays_cross_threads() {
    let _serial = serial();
    let dev = require_gpu!("arrays_cross_threads");
    let a = create(&dev, options(ArrayFormat::Uint32, 1, 64, 0));
    let workers: Vec<_> = (0..4u32)
        .map(|t| {
            let a = a.clone();
            let dev = dev.clone();
            thread::spawn(move || {
                let stream = new_stream(&dev);
                // Each thread writes and reads its own 16 elements of the one array.
                let mine = [t * 100; 16];
                let bytes: Vec<u8> = mine.iter().flat_map(|w| w.to_ne_bytes()).collect();
                OpaqueArray::copy(
                    ArrayRegion::new(&a).at(u64::from(t) * 16, 0, 0),
                    MemoryRegion::host(&bytes, 0),
                    Extent3D::new_2d(16, 1),
                    &stream,
                )
                .unwrap();
                let mut back = vec![0u8; 64];
                OpaqueArray::copy(
                    MemoryRegion::host_mut(&mut back, 0),
                    ArrayRegion::new(&a).at(u64::from(t) * 16, 0, 0),
                    Extent3D::new_2d(16, 1),
                    &stream,
                )
                .unwrap();
                assert_eq!(u32s(&back), mine.to_vec());
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let stream = new_stream(&dev);
    let all = u32s(&a.to_vec(&stream).unwrap());
    for t in 0..4usize {
        assert_eq!(&all[t * 16..t * 16 + 16], &[t as u32 * 100; 16][..]);
    }
}
