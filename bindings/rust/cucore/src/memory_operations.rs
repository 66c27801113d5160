//! Host locations, batched memory operations and stream memory operations
//! (`include/cucore/memory_operations.h`).
//!
//! ```no_run
//! # fn main() -> cucore::Result<()> {
//! use cucore::{copy_batch, BatchCopy, CopySide, Device, Host, Location, StreamOptions, WaitCondition};
//! let dev = Device::get(0)?;
//! let (a, b) = (dev.create_stream(StreamOptions::default())?, dev.create_stream(StreamOptions::default())?);
//! let (src, dst, flag) = (dev.allocate(256, &a)?, dev.allocate(256, &a)?, dev.allocate(64, &a)?);
//! copy_batch(&a, &[BatchCopy::new(CopySide::buffer(&src, 0), CopySide::buffer(&dst, 0), 256)], &[])?;
//! b.write_value_32(&flag, 0, 1, false)?; // after b's earlier work
//! a.wait_value_32(&flag, 0, 1, WaitCondition::Geq, false)?; // a's later work waits for it
//! let here: Location = Host::numa_current().into();
//! # let _ = here;
//! # Ok(())
//! # }
//! ```
//!
//! Names follow cuda.core (`utils.copy_batch`, `CopyOptions`, `MemcpySrcAccessOrder`,
//! `MemcpyOverlapMode`, `prefetch_batch`, `discard_batch`, `discard_prefetch_batch`, `Host`);
//! the stream memory operations are `Stream` methods with the nouns of the C functions. The
//! batched operations need a CUDA 13.0 driver (`Status::NotSupported` before).

use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};
use std::ptr;

use crate::common::{check, Error, Result, Status};
use crate::copy_3d::{prepare, DstMemory, Extent3D, MemoryRegion, SrcMemory};
use crate::memory_resource::{location_to_raw, Location};
use crate::{sys, Buffer, Stream};

/// Host memory as a location (cuda.core's `Host`): any host memory (`Host::any()`), a NUMA
/// node (`Host::numa(node)`) or the calling thread's node (`Host::numa_current()`). Converts
/// into a [`Location`], so it goes wherever a location is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Host {
    /// The NUMA node, if one was named.
    pub numa_id: Option<i32>,
    /// The calling thread's node, whichever it is when the driver acts.
    pub is_numa_current: bool,
}

impl Host {
    /// Any host memory.
    pub fn any() -> Host {
        Host::default()
    }
    /// Host memory of NUMA node `node`.
    pub fn numa(node: i32) -> Host {
        Host { numa_id: Some(node), is_numa_current: false }
    }
    /// Host memory of the calling thread's NUMA node.
    pub fn numa_current() -> Host {
        Host { numa_id: None, is_numa_current: true }
    }
    /// The NUMA node the calling thread runs on now (`cucore_host_numa_current`: Linux getcpu;
    /// 0 on a machine without NUMA). `Status::NotSupported` where the system refuses the query.
    pub fn current_numa_id() -> Result<i32> {
        let mut node: c_int = -1;
        // SAFETY: a valid out-pointer.
        check(unsafe { sys::cucore_host_numa_current(&mut node) })?;
        Ok(node)
    }
    /// The location this names.
    pub fn location(self) -> Location {
        match (self.is_numa_current, self.numa_id) {
            (true, _) => Location::HostNumaCurrent,
            (false, Some(node)) => Location::HostNuma(node),
            (false, None) => Location::Host,
        }
    }
}

impl From<Host> for Location {
    fn from(host: Host) -> Location {
        host.location()
    }
}

// ---- batched copies ----

/// How a batched copy may read its source (`cucore_memcpy_src_access_order_t`; cuda.core's
/// `MemcpySrcAccessOrder`). The destination is always written in stream order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MemcpySrcAccessOrder {
    /// In stream order (the default).
    #[default]
    Stream,
    /// Out of stream order, every read done before the call returns.
    DuringApiCall,
    /// Out of stream order, possibly after the call: keep the source unchanged until done.
    Any,
}

/// Whether a batched copy should overlap with compute (`cucore_memcpy_overlap_mode_t`; a hint).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MemcpyOverlapMode {
    /// The driver's default scheduling.
    #[default]
    Default,
    /// Prefer overlapping with compute work.
    PreferOverlapWithCompute,
}

/// The options of copies in a batch (`cucore_copy_options_t`; cuda.core's `CopyOptions`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CopyOptions {
    /// How the source may be read.
    pub src_access_order: MemcpySrcAccessOrder,
    /// Where the source is expected to be (managed and pageable memory only; a hint).
    pub src_location_hint: Option<Location>,
    /// Where the destination is expected to be.
    pub dst_location_hint: Option<Location>,
    /// Overlap with compute.
    pub overlap_mode: MemcpyOverlapMode,
}

impl CopyOptions {
    /// The C struct.
    pub fn to_raw(&self) -> sys::cucore_copy_options_t {
        let mut o = sys::cucore_copy_options_t::INIT;
        o.src_access_order = match self.src_access_order {
            MemcpySrcAccessOrder::Stream => sys::CUCORE_MEMCPY_SRC_ACCESS_ORDER_STREAM,
            MemcpySrcAccessOrder::DuringApiCall => sys::CUCORE_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL,
            MemcpySrcAccessOrder::Any => sys::CUCORE_MEMCPY_SRC_ACCESS_ORDER_ANY,
        };
        o.overlap_mode = match self.overlap_mode {
            MemcpyOverlapMode::Default => sys::CUCORE_MEMCPY_OVERLAP_MODE_DEFAULT,
            MemcpyOverlapMode::PreferOverlapWithCompute => sys::CUCORE_MEMCPY_OVERLAP_MODE_PREFER_OVERLAP_WITH_COMPUTE,
        };
        o.src_location_hint = location_to_raw(self.src_location_hint);
        o.dst_location_hint = location_to_raw(self.dst_location_hint);
        o
    }
}

/// One side of a batched copy: a [`Buffer`] from a byte offset (checked against its size), or
/// memory at a raw address (host memory, or a device address the caller vouches for). It
/// borrows the buffer, so the buffer outlives the call.
#[derive(Clone, Copy, Debug)]
pub struct CopySide<'a> {
    buffer: *mut sys::cucore_buffer_t,
    pointer: *const c_void,
    offset: u64,
    _borrow: PhantomData<&'a Buffer>,
}

impl<'a> CopySide<'a> {
    /// `buffer` from byte `offset`.
    pub fn buffer(buffer: &'a Buffer, offset: u64) -> CopySide<'a> {
        CopySide { buffer: buffer.as_raw(), pointer: ptr::null(), offset, _borrow: PhantomData }
    }
    /// Memory at `pointer`.
    ///
    /// # Safety
    /// The memory must be valid for the copy's size until the copy is done (for a destination:
    /// writable), as for any asynchronous copy.
    pub unsafe fn pointer(pointer: *const c_void) -> CopySide<'static> {
        CopySide { buffer: ptr::null_mut(), pointer, offset: 0, _borrow: PhantomData }
    }
}

/// One copy of a batch: `size` bytes from `src` to `dst` with the options at `options_index`.
#[derive(Clone, Copy, Debug)]
pub struct BatchCopy<'a> {
    /// The source.
    pub src: CopySide<'a>,
    /// The destination.
    pub dst: CopySide<'a>,
    /// Bytes.
    pub size: u64,
    /// Which options of the batch (0 with none given).
    pub options_index: u32,
}

impl<'a> BatchCopy<'a> {
    /// A copy with the first (or default) options.
    pub fn new(src: CopySide<'a>, dst: CopySide<'a>, size: u64) -> BatchCopy<'a> {
        BatchCopy { src, dst, size, options_index: 0 }
    }
    fn to_raw(self) -> sys::cucore_copy_batch_item_t {
        sys::cucore_copy_batch_item_t {
            src: self.src.buffer,
            src_pointer: self.src.pointer,
            src_offset: self.src.offset,
            dst: self.dst.buffer,
            dst_pointer: self.dst.pointer as *mut c_void,
            dst_offset: self.dst.offset,
            size: self.size,
            options_index: self.options_index,
            reserved: 0,
        }
    }
}

/// Copies a batch in one `cuMemcpyBatchAsync` ordered on `stream` (`cucore_copy_batch`): the
/// batch in stream order, its copies in no particular order among themselves. `options`
/// (empty: the defaults) are picked by each copy's `options_index`. Not on the legacy default
/// stream, nor while the stream is captured.
pub fn copy_batch(stream: &Stream, copies: &[BatchCopy<'_>], options: &[CopyOptions]) -> Result<()> {
    let items: Vec<sys::cucore_copy_batch_item_t> = copies.iter().map(|c| c.to_raw()).collect();
    let raw: Vec<sys::cucore_copy_options_t> = options.iter().map(CopyOptions::to_raw).collect();
    let pointers: Vec<*const sys::cucore_copy_options_t> = raw.iter().map(|o| o as *const _).collect();
    // SAFETY: live handles (borrowed by the items); the arrays outlive the call.
    check(unsafe {
        sys::cucore_copy_batch(stream.as_raw(), items.as_ptr(), items.len(), pointers.as_ptr(), pointers.len())
    })
}

/// cuda.core's form: `srcs[i]` into `dsts[i]`, whole buffers of equal sizes, one set of options.
pub fn copy_batch_buffers(stream: &Stream, srcs: &[&Buffer], dsts: &[&Buffer], options: CopyOptions) -> Result<()> {
    if srcs.len() != dsts.len() {
        return Err(Error::binding(Status::InvalidArgument, "copy_batch: srcs and dsts differ in length".into()));
    }
    let mut copies = Vec::with_capacity(srcs.len());
    for (i, (s, d)) in srcs.iter().zip(dsts).enumerate() {
        let size = s.size()?;
        if d.size()? != size {
            return Err(Error::binding(Status::InvalidArgument, format!("copy_batch: srcs[{i}] and dsts[{i}] differ in size")));
        }
        copies.push(BatchCopy::new(CopySide::buffer(s, 0), CopySide::buffer(d, 0), size));
    }
    copy_batch(stream, &copies, &[options])
}

/// One strided copy of [`copy_3d_batch`]: as [`crate::copy_3d()`] takes it.
pub struct StridedCopy<'a> {
    /// The destination region.
    pub dst: MemoryRegion<DstMemory<'a>>,
    /// The source region.
    pub src: MemoryRegion<SrcMemory<'a>>,
    /// What is copied.
    pub extent: Extent3D,
}

/// Strided copies in one `cuMemcpy3DBatchAsync` ordered on `stream` (`cucore_copy_3d_batch`),
/// each checked as [`crate::copy_3d()`] checks it, with `options` for all. As `copy_3d`, the call
/// waits for the stream when a side is a host slice, so the slices hold the data on `Ok`.
pub fn copy_3d_batch(stream: &Stream, copies: Vec<StridedCopy<'_>>, options: CopyOptions) -> Result<()> {
    let mut raw = Vec::with_capacity(copies.len());
    let mut host = false;
    let mut copies = copies;
    for c in copies.iter_mut() {
        let (copy, on_host) = prepare(&mut c.dst, &c.src, c.extent)?;
        host |= on_host;
        raw.push(copy);
    }
    let pointers: Vec<*const sys::cucore_copy_3d_t> = raw.iter().map(|c| c as *const _).collect();
    let o = options.to_raw();
    // SAFETY: host slices checked and borrowed until the synchronize below; buffers borrowed.
    check(unsafe { sys::cucore_copy_3d_batch(stream.as_raw(), pointers.as_ptr(), pointers.len(), &o) })?;
    if host {
        stream.synchronize()?;
    }
    Ok(())
}

// ---- batched prefetches and discards ----

fn raw_buffers(buffers: &[&Buffer]) -> Vec<*mut sys::cucore_buffer_t> {
    buffers.iter().map(|b| b.as_raw()).collect()
}

/// Prefetches managed buffers in one `cuMemPrefetchBatchAsync` on `stream`: all to
/// `locations[0]` when it has one entry, else buffer i to `locations[i]`.
pub fn prefetch_batch(stream: &Stream, buffers: &[&Buffer], locations: &[Location]) -> Result<()> {
    let raw = raw_buffers(buffers);
    let where_: Vec<sys::cucore_location_t> = locations.iter().map(|l| l.to_raw()).collect();
    // SAFETY: live handles; the arrays outlive the call.
    check(unsafe { sys::cucore_prefetch_batch(stream.as_raw(), raw.as_ptr(), raw.len(), where_.as_ptr(), where_.len()) })
}

/// Discards the contents of managed buffers (`cuMemDiscardBatchAsync`).
pub fn discard_batch(stream: &Stream, buffers: &[&Buffer]) -> Result<()> {
    let raw = raw_buffers(buffers);
    // SAFETY: live handles; the array outlives the call.
    check(unsafe { sys::cucore_discard_batch(stream.as_raw(), raw.as_ptr(), raw.len()) })
}

/// Discards, then makes resident at the locations (`cuMemDiscardAndPrefetchBatchAsync`);
/// locations as [`prefetch_batch`].
pub fn discard_prefetch_batch(stream: &Stream, buffers: &[&Buffer], locations: &[Location]) -> Result<()> {
    let raw = raw_buffers(buffers);
    let where_: Vec<sys::cucore_location_t> = locations.iter().map(|l| l.to_raw()).collect();
    // SAFETY: live handles; the arrays outlive the call.
    check(unsafe {
        sys::cucore_discard_prefetch_batch(stream.as_raw(), raw.as_ptr(), raw.len(), where_.as_ptr(), where_.len())
    })
}

// ---- stream memory operations ----

/// What a wait waits for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WaitCondition {
    /// A cyclic >= (`(int)(*address - value) >= 0`), the default.
    #[default]
    Geq,
    /// `*address == value`.
    Eq,
    /// `(*address & value) != 0`.
    And,
    /// `~(*address | value) != 0` (devices with `CAN_USE_STREAM_WAIT_VALUE_NOR`).
    Nor,
}

impl WaitCondition {
    fn flags(self, flush: bool) -> u32 {
        let c = match self {
            WaitCondition::Geq => sys::CUCORE_STREAM_WAIT_VALUE_GEQ,
            WaitCondition::Eq => sys::CUCORE_STREAM_WAIT_VALUE_EQ,
            WaitCondition::And => sys::CUCORE_STREAM_WAIT_VALUE_AND,
            WaitCondition::Nor => sys::CUCORE_STREAM_WAIT_VALUE_NOR,
        };
        c | if flush { sys::CUCORE_STREAM_WAIT_VALUE_FLUSH } else { 0 }
    }
}

fn write_flags(no_memory_barrier: bool) -> u32 {
    if no_memory_barrier {
        sys::CUCORE_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER
    } else {
        sys::CUCORE_STREAM_WRITE_VALUE_DEFAULT
    }
}

/// The scope of a memory barrier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MemoryBarrierScope {
    /// System-wide (the default).
    #[default]
    System,
    /// The device only.
    Device,
}

impl MemoryBarrierScope {
    fn raw(self) -> sys::cucore_memory_barrier_scope_t {
        match self {
            MemoryBarrierScope::System => sys::CUCORE_MEMORY_BARRIER_SCOPE_SYSTEM,
            MemoryBarrierScope::Device => sys::CUCORE_MEMORY_BARRIER_SCOPE_DEVICE,
        }
    }
}

impl Stream {
    /// Writes `value` at byte `offset` of `buffer` after this stream's earlier work
    /// (`cuStreamWriteValue32`; 4-byte aligned, not managed memory); fenced after earlier
    /// writes unless `no_memory_barrier`.
    pub fn write_value_32(&self, buffer: &Buffer, offset: u64, value: u32, no_memory_barrier: bool) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe {
            sys::cucore_stream_write_value_32(self.as_raw(), buffer.as_raw(), offset, value, write_flags(no_memory_barrier))
        })
    }
    /// As [`Stream::write_value_32`] with 64 bits, 8-byte aligned (`cuStreamWriteValue64`).
    pub fn write_value_64(&self, buffer: &Buffer, offset: u64, value: u64, no_memory_barrier: bool) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe {
            sys::cucore_stream_write_value_64(self.as_raw(), buffer.as_raw(), offset, value, write_flags(no_memory_barrier))
        })
    }
    /// Makes this stream's later work wait until the 32-bit value at byte `offset` of `buffer`
    /// meets `condition` against `value` (`cuStreamWaitValue32`), then flushes remote writes if
    /// `flush`. What writes the value must not itself wait behind this stream.
    pub fn wait_value_32(&self, buffer: &Buffer, offset: u64, value: u32, condition: WaitCondition, flush: bool) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe {
            sys::cucore_stream_wait_value_32(self.as_raw(), buffer.as_raw(), offset, value, condition.flags(flush))
        })
    }
    /// As [`Stream::wait_value_32`] on 64 bits, 8-byte aligned (`cuStreamWaitValue64`).
    pub fn wait_value_64(&self, buffer: &Buffer, offset: u64, value: u64, condition: WaitCondition, flush: bool) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe {
            sys::cucore_stream_wait_value_64(self.as_raw(), buffer.as_raw(), offset, value, condition.flags(flush))
        })
    }
    /// Flushes outstanding remote writes (`Status::NotSupported` without `CAN_FLUSH_REMOTE_WRITES`).
    pub fn flush_remote_writes(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_stream_flush_remote_writes(self.as_raw()) })
    }
    /// A memory barrier of `scope` in this stream's order.
    pub fn memory_barrier(&self, scope: MemoryBarrierScope) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_stream_memory_barrier(self.as_raw(), scope.raw()) })
    }
    /// Enqueues the operations in one `cuStreamBatchMemOp`, in order (at most 255).
    pub fn batch_memory_ops(&self, ops: &[StreamMemoryOp<'_>]) -> Result<()> {
        let raw: Vec<sys::cucore_stream_memory_op_t> = ops.iter().map(|o| o.raw).collect();
        // SAFETY: live handles (borrowed by the ops); the array outlives the call.
        check(unsafe { sys::cucore_stream_batch_memory_ops(self.as_raw(), raw.as_ptr(), raw.len()) })
    }
}

/// One operation of [`Stream::batch_memory_ops`] (`cucore_stream_memory_op_t`); it borrows its buffer.
#[derive(Clone, Copy, Debug)]
pub struct StreamMemoryOp<'a> {
    raw: sys::cucore_stream_memory_op_t,
    _borrow: PhantomData<&'a Buffer>,
}

impl<'a> StreamMemoryOp<'a> {
    fn on(type_: sys::cucore_stream_memory_op_type_t, flags: u32, buffer: Option<&'a Buffer>, offset: u64, value: u64) -> Self {
        StreamMemoryOp {
            raw: sys::cucore_stream_memory_op_t {
                type_,
                flags,
                buffer: buffer.map_or(ptr::null_mut(), |b| b.as_raw()),
                offset,
                value,
            },
            _borrow: PhantomData,
        }
    }
    /// A 32-bit write.
    pub fn write_value_32(buffer: &'a Buffer, offset: u64, value: u32, no_memory_barrier: bool) -> Self {
        Self::on(sys::CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32, write_flags(no_memory_barrier), Some(buffer), offset, value.into())
    }
    /// A 64-bit write.
    pub fn write_value_64(buffer: &'a Buffer, offset: u64, value: u64, no_memory_barrier: bool) -> Self {
        Self::on(sys::CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_64, write_flags(no_memory_barrier), Some(buffer), offset, value)
    }
    /// A 32-bit wait.
    pub fn wait_value_32(buffer: &'a Buffer, offset: u64, value: u32, condition: WaitCondition, flush: bool) -> Self {
        Self::on(sys::CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_32, condition.flags(flush), Some(buffer), offset, value.into())
    }
    /// A 64-bit wait.
    pub fn wait_value_64(buffer: &'a Buffer, offset: u64, value: u64, condition: WaitCondition, flush: bool) -> Self {
        Self::on(sys::CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_64, condition.flags(flush), Some(buffer), offset, value)
    }
    /// A flush of remote writes.
    pub fn flush_remote_writes() -> StreamMemoryOp<'static> {
        StreamMemoryOp::on(sys::CUCORE_STREAM_MEMORY_OP_FLUSH_REMOTE_WRITES, 0, None, 0, 0)
    }
    /// A memory barrier.
    pub fn memory_barrier(scope: MemoryBarrierScope) -> StreamMemoryOp<'static> {
        StreamMemoryOp::on(sys::CUCORE_STREAM_MEMORY_OP_BARRIER, scope.raw() as u32, None, 0, 0)
    }
}
