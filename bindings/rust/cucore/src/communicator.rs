//! What `include/cucore/communicator.h` holds: collective communication between GPUs through
//! NCCL, on cucore [`Buffer`]s and [`Stream`]s. NCCL (`libnccl.so.2`, or `CUCORE_NCCL_PATH`) is
//! loaded by libcucore on first use; without it every call here fails with
//! `Status::NotSupported` naming what was tried, and the rest of the crate works.
//!
//! Two ways to make communicators: one process driving several local GPUs
//! ([`Communicator::create_all`]), or one process per GPU: one makes a [`CommunicatorId`], passes
//! its bytes to the others, and each calls [`Communicator::create`] with its rank.
//!
//! Operations are enqueued on a stream of the communicator's device and keep the communicator,
//! the buffers and the stream alive until the stream has passed them, so every handle may be
//! dropped right after the call. Counts are in elements of the data type; a count of 0 means
//! "all of it" (the count follows from the buffers, whose sizes must then match exactly). One
//! thread driving several ranks must put their operations in a group ([`group`], [`Group`]).
//!
//! ```no_run
//! use cucore::{Communicator, DataType, Device, ReduceOp, StreamOptions};
//!
//! # fn main() -> cucore::Result<()> {
//! let devices = vec![Device::get(0)?, Device::get(1)?];
//! let comms = Communicator::create_all(&devices)?;
//! let streams = devices.iter().map(|d| d.create_stream(StreamOptions::default())).collect::<Result<Vec<_>, _>>()?;
//! let buffers = devices.iter().zip(&streams).map(|(d, s)| d.allocate(4096, s)).collect::<Result<Vec<_>, _>>()?;
//! cucore::group(|| {
//!     for ((comm, buf), stream) in comms.iter().zip(&buffers).zip(&streams) {
//!         comm.all_reduce(buf, buf, 0, DataType::Float32, ReduceOp::Sum, stream)?; // in place
//!     }
//!     Ok(())
//! })?;
//! # Ok(())
//! # }
//! ```

use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};
use std::ptr::{self, NonNull};

use cucore_sys as sys;

use crate::buffer::Buffer;
use crate::common::{check, Error, Result, Status};
use crate::device::Device;
use crate::stream::Stream;

/// The version of the NCCL that libcucore loaded (`NCCL_VERSION_CODE`: major * 10000 + minor *
/// 100 + patch, e.g. 22809 for 2.28.9); loads it if needed (`cucore_communicator_library_version`).
pub fn library_version() -> Result<i32> {
    let mut v: c_int = 0;
    // SAFETY: a valid out-pointer.
    check(unsafe { sys::cucore_communicator_library_version(&mut v) })?;
    Ok(v)
}

/// Element types of collective operations (`cucore_data_type_t`; NCCL's `ncclDataType_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `i8`.
    Int8,
    /// `u8`.
    Uint8,
    /// `i32`.
    Int32,
    /// `u32`.
    Uint32,
    /// `i64`.
    Int64,
    /// `u64`.
    Uint64,
    /// IEEE half precision (2 bytes).
    Float16,
    /// `f32`.
    Float32,
    /// `f64`.
    Float64,
    /// bfloat16 (2 bytes).
    Bfloat16,
    /// 8-bit float E4M3 (NCCL 2.24 or later; `Status::NotSupported` before).
    Float8E4M3,
    /// 8-bit float E5M2 (NCCL 2.24 or later; `Status::NotSupported` before).
    Float8E5M2,
}

impl DataType {
    /// The raw `cucore_data_type_t`.
    pub fn raw(self) -> sys::cucore_data_type_t {
        match self {
            DataType::Int8 => sys::CUCORE_DATA_TYPE_INT8,
            DataType::Uint8 => sys::CUCORE_DATA_TYPE_UINT8,
            DataType::Int32 => sys::CUCORE_DATA_TYPE_INT32,
            DataType::Uint32 => sys::CUCORE_DATA_TYPE_UINT32,
            DataType::Int64 => sys::CUCORE_DATA_TYPE_INT64,
            DataType::Uint64 => sys::CUCORE_DATA_TYPE_UINT64,
            DataType::Float16 => sys::CUCORE_DATA_TYPE_FLOAT16,
            DataType::Float32 => sys::CUCORE_DATA_TYPE_FLOAT32,
            DataType::Float64 => sys::CUCORE_DATA_TYPE_FLOAT64,
            DataType::Bfloat16 => sys::CUCORE_DATA_TYPE_BFLOAT16,
            DataType::Float8E4M3 => sys::CUCORE_DATA_TYPE_FLOAT8_E4M3,
            DataType::Float8E5M2 => sys::CUCORE_DATA_TYPE_FLOAT8_E5M2,
        }
    }

    /// The size in bytes of one element (1, 2, 4 or 8; `cucore_data_type_size`, which needs no
    /// NCCL).
    pub fn size(self) -> Result<u32> {
        let mut v: u32 = 0;
        // SAFETY: a valid out-pointer.
        check(unsafe { sys::cucore_data_type_size(self.raw(), &mut v) })?;
        Ok(v)
    }

    /// The data type of Rust element type `T` (`DataType::of::<f32>()` is `Float32`).
    pub fn of<T: CollectiveElement>() -> DataType {
        T::DATA_TYPE
    }
}

/// Rust element types with a [`DataType`] of their own (the 2-byte and 8-bit floats have no
/// Rust type: name them by [`DataType`]).
pub trait CollectiveElement: Copy {
    /// The element's data type.
    const DATA_TYPE: DataType;
}

macro_rules! collective_elements {
    ($($ty:ty => $dt:ident),* $(,)?) => {
        $(impl CollectiveElement for $ty {
            const DATA_TYPE: DataType = DataType::$dt;
        })*
    };
}
collective_elements!(i8 => Int8, u8 => Uint8, i32 => Int32, u32 => Uint32, i64 => Int64, u64 => Uint64,
                     f32 => Float32, f64 => Float64);

/// Reductions (`cucore_reduce_op_t`; NCCL's `ncclRedOp_t`). `Avg` divides the sum by the number
/// of ranks (integer types: truncated).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum (the default).
    #[default]
    Sum,
    /// The product.
    Prod,
    /// The largest value.
    Max,
    /// The smallest value.
    Min,
    /// The sum divided by the number of ranks.
    Avg,
}

impl ReduceOp {
    /// The raw `cucore_reduce_op_t`.
    pub fn raw(self) -> sys::cucore_reduce_op_t {
        match self {
            ReduceOp::Sum => sys::CUCORE_REDUCE_SUM,
            ReduceOp::Prod => sys::CUCORE_REDUCE_PROD,
            ReduceOp::Max => sys::CUCORE_REDUCE_MAX,
            ReduceOp::Min => sys::CUCORE_REDUCE_MIN,
            ReduceOp::Avg => sys::CUCORE_REDUCE_AVG,
        }
    }
}

/// The bytes that name one communicator clique across processes (`cucore_communicator_id_t`;
/// NCCL's `ncclUniqueId`): plain data, passed to every process that joins as is.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CommunicatorId {
    bytes: [u8; CommunicatorId::SIZE],
}

impl CommunicatorId {
    /// The size of an id in bytes (`CUCORE_COMMUNICATOR_ID_BYTES`).
    pub const SIZE: usize = sys::CUCORE_COMMUNICATOR_ID_BYTES as usize;

    /// A new id for one clique of ranks (`cucore_communicator_id_create`; `ncclGetUniqueId`,
    /// which opens a listening socket for the ranks to meet).
    pub fn create() -> Result<CommunicatorId> {
        let mut raw = sys::cucore_communicator_id_t::default();
        // SAFETY: a valid out-pointer.
        check(unsafe { sys::cucore_communicator_id_create(&mut raw) })?;
        Ok(CommunicatorId::from_raw(&raw))
    }

    /// The id's bytes, to pass to the other processes.
    pub fn as_bytes(&self) -> &[u8; CommunicatorId::SIZE] {
        &self.bytes
    }

    /// The id whose bytes are `bytes` (from [`as_bytes`](Self::as_bytes) of another process).
    /// `Status::InvalidArgument` unless there are exactly [`SIZE`](Self::SIZE) of them.
    pub fn from_bytes(bytes: &[u8]) -> Result<CommunicatorId> {
        if bytes.len() != CommunicatorId::SIZE {
            return Err(Error::binding(
                Status::InvalidArgument,
                format!("CommunicatorId::from_bytes: {} bytes, not {}", bytes.len(), CommunicatorId::SIZE),
            ));
        }
        let mut id = CommunicatorId { bytes: [0; CommunicatorId::SIZE] };
        id.bytes.copy_from_slice(bytes);
        Ok(id)
    }

    /// The id as the C struct.
    pub fn to_raw(&self) -> sys::cucore_communicator_id_t {
        let mut raw = sys::cucore_communicator_id_t::default();
        for (c, b) in raw.internal.iter_mut().zip(self.bytes.iter()) {
            *c = *b as _;
        }
        raw
    }

    /// The id of a C struct.
    pub fn from_raw(raw: &sys::cucore_communicator_id_t) -> CommunicatorId {
        let mut id = CommunicatorId { bytes: [0; CommunicatorId::SIZE] };
        for (b, c) in id.bytes.iter_mut().zip(raw.internal.iter()) {
            *b = *c as u8;
        }
        id
    }
}

impl std::fmt::Debug for CommunicatorId {
    /// The first bytes in hex (an id is opaque; this tells two apart).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CommunicatorId(")?;
        for b in &self.bytes[..8] {
            write!(f, "{:02x}", b)?;
        }
        write!(f, "...)")
    }
}

/// One rank of a group of GPUs that reduce, gather and exchange buffers together
/// (`cucore_communicator_t`; NCCL's `ncclComm_t`). Holds its device's primary context. The
/// operations take a stream of the communicator's device and device (or managed) buffers of it;
/// the same buffer may be both send and receive (in place).
pub struct Communicator {
    raw: NonNull<sys::cucore_communicator_t>,
}

handle_type!(Communicator, sys::cucore_communicator_t);
identity_eq!(Communicator);

/// A buffer argument that may be absent (NULL).
fn raw_or_null(buffer: Option<&Buffer>) -> *mut sys::cucore_buffer_t {
    buffer.map_or(ptr::null_mut(), Buffer::as_raw)
}

impl Communicator {
    /// Joins clique `id` as rank `rank` of `rank_count` on `device` (`cucore_communicator_create`;
    /// `ncclCommInitRank`). Blocks until every rank has joined: call it from every rank's
    /// process (or thread, or inside a [`group`] when one thread creates several).
    pub fn create(device: &Device, id: &CommunicatorId, rank_count: i32, rank: i32) -> Result<Communicator> {
        let raw_id = id.to_raw();
        let mut raw = ptr::null_mut();
        // SAFETY: a live device handle, a valid id and out-pointer.
        check(unsafe { sys::cucore_communicator_create(device.as_raw(), &raw_id, rank_count, rank, &mut raw) })?;
        Communicator::from_out(raw)
    }

    /// One process driving several GPUs: one communicator per device, rank i on `devices[i]`
    /// (`cucore_communicator_create_all`; `ncclCommInitAll`). All or nothing.
    pub fn create_all(devices: &[Device]) -> Result<Vec<Communicator>> {
        let raw_devices: Vec<*mut sys::cucore_device_t> = devices.iter().map(Device::as_raw).collect();
        let mut raw = vec![ptr::null_mut(); devices.len()];
        // SAFETY: live device handles; `raw` has room for one communicator per device.
        check(unsafe {
            sys::cucore_communicator_create_all(raw_devices.as_ptr(), raw_devices.len(), raw.as_mut_ptr())
        })?;
        raw.into_iter().map(Communicator::from_out).collect()
    }

    /// This communicator's rank (`ncclCommUserRank`).
    pub fn rank(&self) -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_communicator_rank(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// The number of ranks in its clique (`ncclCommCount`).
    pub fn rank_count(&self) -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_communicator_rank_count(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// The device the communicator runs on.
    pub fn device(&self) -> Result<Device> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_communicator_device(self.as_raw(), &mut raw) })?;
        Device::from_out(raw)
    }

    /// The `ncclComm_t`, for calling NCCL directly (the communicator still owns it).
    pub fn handle(&self) -> Result<*mut c_void> {
        let mut v: *mut c_void = ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        check(unsafe { sys::cucore_communicator_handle(self.as_raw(), &mut v) })?;
        Ok(v)
    }

    /// `Ok` unless NCCL reported an asynchronous failure on the communicator
    /// (`ncclCommGetAsyncError`); then `Status::Cuda` naming NCCL's error.
    pub fn check(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::cucore_communicator_check(self.as_raw()) })
    }

    /// Reduces `count` elements (0: all of it; the buffers then have one size) of every rank's
    /// `send` into every rank's `recv` (`ncclAllReduce`).
    pub fn all_reduce(
        &self,
        send: &Buffer,
        recv: &Buffer,
        count: u64,
        data_type: DataType,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe {
            sys::cucore_communicator_all_reduce(
                self.as_raw(),
                send.as_raw(),
                recv.as_raw(),
                count,
                data_type.raw(),
                op.raw(),
                stream.as_raw(),
            )
        })
    }

    /// Concatenates every rank's `send_count` elements of `send` into every rank's `recv`, in rank
    /// order (`ncclAllGather`). 0: all of `send`, and `recv` must be rank_count times its size.
    pub fn all_gather(
        &self,
        send: &Buffer,
        recv: &Buffer,
        send_count: u64,
        data_type: DataType,
        stream: &Stream,
    ) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe {
            sys::cucore_communicator_all_gather(
                self.as_raw(),
                send.as_raw(),
                recv.as_raw(),
                send_count,
                data_type.raw(),
                stream.as_raw(),
            )
        })
    }

    /// Reduces every rank's `send` (rank_count * `recv_count` elements) and leaves block r of the
    /// result in rank r's `recv` (`ncclReduceScatter`). 0: all of `recv`, and `send` must be
    /// rank_count times its size.
    pub fn reduce_scatter(
        &self,
        send: &Buffer,
        recv: &Buffer,
        recv_count: u64,
        data_type: DataType,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe {
            sys::cucore_communicator_reduce_scatter(
                self.as_raw(),
                send.as_raw(),
                recv.as_raw(),
                recv_count,
                data_type.raw(),
                op.raw(),
                stream.as_raw(),
            )
        })
    }

    /// Copies rank `root`'s `send` into every rank's `recv` (`ncclBroadcast`). Only the root reads
    /// `send`; other ranks may pass `None`. 0: all of `recv` (on the root, `send` must match).
    pub fn broadcast(
        &self,
        send: Option<&Buffer>,
        recv: &Buffer,
        count: u64,
        data_type: DataType,
        root: i32,
        stream: &Stream,
    ) -> Result<()> {
        // SAFETY: live handles (or NULL for an absent send buffer).
        check(unsafe {
            sys::cucore_communicator_broadcast(
                self.as_raw(),
                raw_or_null(send),
                recv.as_raw(),
                count,
                data_type.raw(),
                root,
                stream.as_raw(),
            )
        })
    }

    /// Reduces every rank's `send` into rank `root`'s `recv` (`ncclReduce`). Only the root writes
    /// `recv`; other ranks may pass `None`. 0: all of `send` (on the root, `recv` must match).
    #[allow(clippy::too_many_arguments)]
    pub fn reduce(
        &self,
        send: &Buffer,
        recv: Option<&Buffer>,
        count: u64,
        data_type: DataType,
        op: ReduceOp,
        root: i32,
        stream: &Stream,
    ) -> Result<()> {
        // SAFETY: live handles (or NULL for an absent receive buffer).
        check(unsafe {
            sys::cucore_communicator_reduce(
                self.as_raw(),
                send.as_raw(),
                raw_or_null(recv),
                count,
                data_type.raw(),
                op.raw(),
                root,
                stream.as_raw(),
            )
        })
    }

    /// Sends `count` elements (0: all) of `buffer` to rank `peer`, which receives them with
    /// [`recv`](Self::recv) (`ncclSend`). A send and its matching receive on one thread need a
    /// [`group`] around them.
    pub fn send(&self, buffer: &Buffer, count: u64, data_type: DataType, peer: i32, stream: &Stream) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe {
            sys::cucore_communicator_send(self.as_raw(), buffer.as_raw(), count, data_type.raw(), peer, stream.as_raw())
        })
    }

    /// Receives `count` elements (0: all of `buffer`) from rank `peer` into `buffer` (`ncclRecv`).
    pub fn recv(&self, buffer: &Buffer, count: u64, data_type: DataType, peer: i32, stream: &Stream) -> Result<()> {
        // SAFETY: live handles.
        check(unsafe {
            sys::cucore_communicator_recv(self.as_raw(), buffer.as_raw(), count, data_type.raw(), peer, stream.as_raw())
        })
    }
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator")
            .field("rank", &self.rank().ok())
            .field("rank_count", &self.rank_count().ok())
            .finish()
    }
}

/// An open group on the calling thread (`cucore_communicator_group_start`; `ncclGroupStart`): the
/// operations and creations that follow are handed to NCCL together when the outermost group
/// ends. End it with [`end`](Self::end), which reports NCCL's failure; dropping it unended ends
/// it too, reporting a failure to the library's release-error path
/// ([`release_error_count`](crate::release_error_count)). Groups nest. Not `Send`: a group
/// belongs to its thread.
#[must_use = "a group ends when this guard is dropped"]
pub struct Group {
    open: bool,
    _thread: PhantomData<*const ()>,
}

impl Group {
    /// Opens a group on the calling thread.
    pub fn start() -> Result<Group> {
        // SAFETY: no arguments.
        check(unsafe { sys::cucore_communicator_group_start() })?;
        Ok(Group { open: true, _thread: PhantomData })
    }

    /// Ends the group (`cucore_communicator_group_end`; at the outermost end the grouped
    /// operations start). What they use is held until their streams pass them, also when NCCL
    /// fails.
    pub fn end(mut self) -> Result<()> {
        self.open = false;
        // SAFETY: no arguments; this guard's group is open on this thread.
        check(unsafe { sys::cucore_communicator_group_end() })
    }

    /// How many groups are open on the calling thread (0: none; `cucore_communicator_group_depth`).
    pub fn depth() -> i32 {
        // SAFETY: reads this thread's count only.
        unsafe { sys::cucore_communicator_group_depth() }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        // SAFETY: no arguments; then reads this thread's error slot right after the failed call
        // and hands it on (the message stays valid until the next call on this thread).
        unsafe {
            if sys::cucore_communicator_group_end() != sys::CUCORE_SUCCESS {
                sys::cucore_report_release_error(
                    sys::cucore_last_error_status(),
                    sys::cucore_last_cuda_result(),
                    sys::cucore_last_error_message(),
                );
            }
        }
    }
}

/// Runs `body` inside a group ([`Group`]) and ends it: `body`'s error if it failed (the group is
/// ended all the same), else the group end's.
pub fn group<R>(body: impl FnOnce() -> Result<R>) -> Result<R> {
    let guard = Group::start()?;
    match body() {
        Ok(value) => guard.end().map(|()| value),
        Err(e) => {
            // The body's error is the one to report; the end still hands NCCL what was enqueued.
            let _ = guard.end();
            Err(e)
        }
    }
}
