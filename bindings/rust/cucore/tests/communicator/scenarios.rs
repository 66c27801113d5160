//! The communicator scenarios, run by two test binaries: `communicator.rs` on two real GPUs with
//! the NCCL the process finds (they skip below 2 GPUs or without NCCL) and `communicator_fake.rs`
//! against the tests' fake driver and fake NCCL (libcucore_fake_nccl.so, which computes
//! collectives on the host), so that they run through the real libcucore on every machine.
//! `communicator_tests!(setup)` defines one `#[test]` per scenario; `setup(test)` gives the two
//! devices, or None after printing why the test is skipped. Every scenario reads its results
//! back and compares them.
#![allow(dead_code)]

use std::fmt::Debug;

use cucore::{group, Communicator, CommunicatorId, DataType, Group, ReduceOp};

use crate::common::*;

/// Defines one test per scenario, each under the process-wide lock.
macro_rules! communicator_tests {
    ($setup:path) => {
        communicator_tests!(@each $setup;
            ids_and_what_a_communicator_says,
            one_thread_joins_every_rank_by_id_in_a_group,
            one_thread_per_rank_joins_by_id,
            all_reduce_sums_and_reduces_in_place,
            all_gather_concatenates_in_rank_order,
            reduce_scatter_leaves_each_rank_its_block,
            broadcast_and_reduce_name_a_root,
            send_and_receive_in_a_group,
            group_closure_and_guard,
            argument_errors,
            device_peer_access,
            handles_are_send_and_sync,
        );
    };
    (@each $setup:path; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let _serial = serial();
                let Some(devices) = $setup(stringify!($name)) else { return };
                scenarios::$name(&devices);
            }
        )*
    };
}

/// Element types the scenarios copy to and from buffers.
pub trait Elem: Copy + PartialEq + Debug + cucore::CollectiveElement {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! elems {
    ($($ty:ty),*) => {
        $(impl Elem for $ty {
            const SIZE: usize = std::mem::size_of::<$ty>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_ne_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                <$ty>::from_ne_bytes(bytes.try_into().unwrap())
            }
        })*
    };
}
elems!(i8, u8, i32, u32, i64, u64, f32, f64);

/// The two ranks' devices, communicators and streams.
pub struct Ranks {
    pub devices: Vec<Device>,
    pub comms: Vec<Communicator>,
    pub streams: Vec<Stream>,
}

impl Ranks {
    pub fn new(devices: &[Device]) -> Ranks {
        let comms = Communicator::create_all(devices).expect("Communicator::create_all");
        let streams = devices.iter().map(|d| d.create_stream(StreamOptions::default()).unwrap()).collect();
        Ranks { devices: devices.to_vec(), comms, streams }
    }

    /// A buffer of rank `r`'s device holding `values`.
    pub fn buffer<T: Elem>(&self, r: usize, values: &[T]) -> Buffer {
        let mut bytes = Vec::new();
        for v in values {
            v.put(&mut bytes);
        }
        let b = self.devices[r].allocate(bytes.len() as u64, &self.streams[r]).unwrap();
        b.copy_from_host(0, &bytes, &self.streams[r]).unwrap();
        b
    }

    /// A buffer of `count` zeros of `T` on rank `r`'s device.
    pub fn zeros<T: Elem>(&self, r: usize, count: usize) -> Buffer {
        let b = self.devices[r].allocate((count * T::SIZE) as u64, &self.streams[r]).unwrap();
        b.fill(0, 1, &self.streams[r]).unwrap();
        b
    }

    /// The values of buffer `b` of rank `r` (after its stream's work).
    pub fn values<T: Elem>(&self, r: usize, b: &Buffer) -> Vec<T> {
        let mut bytes = vec![0u8; b.size().unwrap() as usize];
        b.copy_to_host(0, &mut bytes, &self.streams[r]).unwrap();
        bytes.chunks(T::SIZE).map(T::get).collect()
    }
}

pub fn ids_and_what_a_communicator_says(devices: &[Device]) {
    let id = CommunicatorId::create().unwrap();
    assert_ne!(id.as_bytes(), &[0u8; CommunicatorId::SIZE], "a made id is not all zeros");
    assert_eq!(CommunicatorId::from_bytes(id.as_bytes()).unwrap(), id);
    assert_eq!(CommunicatorId::from_raw(&id.to_raw()), id);
    let e = CommunicatorId::from_bytes(&id.as_bytes()[..100]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(cucore::communicator::library_version().unwrap() >= 20000, "an NCCL 2 version code");
    assert_eq!(DataType::Bfloat16.size().unwrap(), 2);
    assert_eq!(DataType::Float64.size().unwrap(), 8);
    assert_eq!(DataType::of::<u32>(), DataType::Uint32);

    let ranks = Ranks::new(devices);
    assert_eq!(ranks.comms.len(), 2);
    for (r, comm) in ranks.comms.iter().enumerate() {
        assert_eq!(comm.rank().unwrap(), r as i32);
        assert_eq!(comm.rank_count().unwrap(), 2);
        assert_eq!(comm.device().unwrap(), devices[r]);
        assert!(!comm.handle().unwrap().is_null());
        comm.check().unwrap();
    }
    assert_ne!(ranks.comms[0], ranks.comms[1]);
    assert_eq!(ranks.comms[0].clone(), ranks.comms[0]);
    assert!(format!("{:?}", ranks.comms[1]).contains("rank: Some(1)"));
}

pub fn one_thread_joins_every_rank_by_id_in_a_group(devices: &[Device]) {
    let id = CommunicatorId::create().unwrap();
    let comms = group(|| (0..2).map(|r| Communicator::create(&devices[r], &id, 2, r as i32)).collect::<Result<Vec<_>, _>>())
        .unwrap();
    for (r, comm) in comms.iter().enumerate() {
        assert_eq!(comm.rank().unwrap(), r as i32);
        assert_eq!(comm.device().unwrap(), devices[r]);
    }
    // The communicators work: an all-reduce of one i64 per rank.
    let streams: Vec<Stream> = devices.iter().map(|d| d.create_stream(StreamOptions::default()).unwrap()).collect();
    let ranks = Ranks { devices: devices.to_vec(), comms, streams };
    let bufs = [ranks.buffer::<i64>(0, &[40]), ranks.buffer::<i64>(1, &[2])];
    group(|| {
        for r in 0..2 {
            ranks.comms[r].all_reduce(&bufs[r], &bufs[r], 0, DataType::Int64, ReduceOp::Sum, &ranks.streams[r])?;
        }
        Ok(())
    })
    .unwrap();
    for r in 0..2 {
        assert_eq!(ranks.values::<i64>(r, &bufs[r]), vec![42]);
    }
}

pub fn one_thread_per_rank_joins_by_id(devices: &[Device]) {
    // As one process per GPU would: each rank's thread joins with the id's bytes (each create
    // blocks until both have joined) and runs its half of an all-gather.
    let id = CommunicatorId::create().unwrap();
    let bytes = id.as_bytes().to_vec();
    // Both ranks' operations are enqueued before either reads its result (the fake NCCL computes
    // when the last rank posts; NCCL needs no such wait).
    let enqueued = std::sync::Barrier::new(2);
    let results: Vec<Vec<u32>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..2usize)
            .map(|r| {
                let bytes = bytes.clone();
                let device = devices[r].clone();
                let enqueued = &enqueued;
                scope.spawn(move || {
                    let id = CommunicatorId::from_bytes(&bytes).unwrap();
                    let comm = Communicator::create(&device, &id, 2, r as i32).unwrap();
                    let stream = device.create_stream(StreamOptions::default()).unwrap();
                    let mut host = Vec::new();
                    for v in [r as u32 * 10 + 1, r as u32 * 10 + 2] {
                        v.put(&mut host);
                    }
                    let send = device.allocate(8, &stream).unwrap();
                    send.copy_from_host(0, &host, &stream).unwrap();
                    let recv = device.allocate(16, &stream).unwrap();
                    comm.all_gather(&send, &recv, 0, DataType::Uint32, &stream).unwrap();
                    enqueued.wait();
                    let mut out = vec![0u8; 16];
                    recv.copy_to_host(0, &mut out, &stream).unwrap();
                    out.chunks(4).map(u32::get).collect::<Vec<u32>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for got in results {
        assert_eq!(got, vec![1, 2, 11, 12]);
    }
}

pub fn all_reduce_sums_and_reduces_in_place(devices: &[Device]) {
    let ranks = Ranks::new(devices);
    let send = [ranks.buffer::<f32>(0, &[1.0, 2.0, 3.0, 4.0]), ranks.buffer::<f32>(1, &[0.5, -2.0, 10.0, 0.0])];
    let recv = [ranks.zeros::<f32>(0, 4), ranks.zeros::<f32>(1, 4)];
    group(|| {
        for r in 0..2 {
            ranks.comms[r].all_reduce(&send[r], &recv[r], 0, DataType::of::<f32>(), ReduceOp::Sum, &ranks.streams[r])?;
        }
        Ok(())
    })
    .unwrap();
    for r in 0..2 {
        assert_eq!(ranks.values::<f32>(r, &recv[r]), vec![1.5, 0.0, 13.0, 4.0]);
    }
    // In place, max, an explicit count of 2: the third element is untouched.
    let ints = [ranks.buffer::<i32>(0, &[5, -1, 7]), ranks.buffer::<i32>(1, &[2, 8, 100])];
    let guard = Group::start().unwrap();
    for r in 0..2 {
        ranks.comms[r].all_reduce(&ints[r], &ints[r], 2, DataType::Int32, ReduceOp::Max, &ranks.streams[r]).unwrap();
    }
    guard.end().unwrap();
    assert_eq!(ranks.values::<i32>(0, &ints[0]), vec![5, 8, 7]);
    assert_eq!(ranks.values::<i32>(1, &ints[1]), vec![5, 8, 100]);
    // Avg of f64 (a sum divided by the rank count).
    let avg = [ranks.buffer::<f64>(0, &[1.0, 10.0]), ranks.buffer::<f64>(1, &[3.0, 20.0])];
    group(|| {
        for r in 0..2 {
            ranks.comms[r].all_reduce(&avg[r], &avg[r], 0, DataType::Float64, ReduceOp::Avg, &ranks.streams[r])?;
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(ranks.values::<f64>(1, &avg[1]), vec![2.0, 15.0]);
}

pub fn all_gather_concatenates_in_rank_order(devices: &[Device]) {
    let ranks = Ranks::new(devices);
    let send = [ranks.buffer::<f64>(0, &[1.5, 2.5]), ranks.buffer::<f64>(1, &[-3.0, 4.0])];
    let recv = [ranks.zeros::<f64>(0, 4), ranks.zeros::<f64>(1, 4)];
    group(|| {
        for r in 0..2 {
            ranks.comms[r].all_gather(&send[r], &recv[r], 0, DataType::Float64, &ranks.streams[r])?;
        }
        Ok(())
    })
    .unwrap();
    for r in 0..2 {
        assert_eq!(ranks.values::<f64>(r, &recv[r]), vec![1.5, 2.5, -3.0, 4.0]);
    }
}

pub fn reduce_scatter_leaves_each_rank_its_block(devices: &[Device]) {
    let ranks = Ranks::new(devices);
    let send = [ranks.buffer::<u32>(0, &[1, 2, 3, 4]), ranks.buffer::<u32>(1, &[10, 20, 30, 40])];
    let recv = [ranks.zeros::<u32>(0, 2), ranks.zeros::<u32>(1, 2)];
    group(|| {
        for r in 0..2 {
            ranks.comms[r].reduce_scatter(&send[r], &recv[r], 0, DataType::Uint32, ReduceOp::Sum, &ranks.streams[r])?;
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(ranks.values::<u32>(0, &recv[0]), vec![11, 22]);
    assert_eq!(ranks.values::<u32>(1, &recv[1]), vec![33, 44]);
}

pub fn broadcast_and_reduce_name_a_root(devices: &[Device]) {
    let ranks = Ranks::new(devices);
    // Broadcast from rank 1; rank 0 passes no send buffer.
    let root_data = ranks.buffer::<i64>(1, &[7, -8, 9]);
    let out = [ranks.zeros::<i64>(0, 3), ranks.zeros::<i64>(1, 3)];
    group(|| {
        ranks.comms[0].broadcast(None, &out[0], 0, DataType::Int64, 1, &ranks.streams[0])?;
        ranks.comms[1].broadcast(Some(&root_data), &out[1], 0, DataType::Int64, 1, &ranks.streams[1])
    })
    .unwrap();
    for r in 0..2 {
        assert_eq!(ranks.values::<i64>(r, &out[r]), vec![7, -8, 9]);
    }
    // Reduce (product) to rank 0; rank 1 passes no receive buffer.
    let factors = [ranks.buffer::<f32>(0, &[2.0, 3.0]), ranks.buffer::<f32>(1, &[4.0, -5.0])];
    let product = ranks.zeros::<f32>(0, 2);
    group(|| {
        ranks.comms[0].reduce(&factors[0], Some(&product), 0, DataType::Float32, ReduceOp::Prod, 0, &ranks.streams[0])?;
        ranks.comms[1].reduce(&factors[1], None, 0, DataType::Float32, ReduceOp::Prod, 0, &ranks.streams[1])
    })
    .unwrap();
    assert_eq!(ranks.values::<f32>(0, &product), vec![8.0, -15.0]);
}

pub fn send_and_receive_in_a_group(devices: &[Device]) {
    let ranks = Ranks::new(devices);
    let from0 = ranks.buffer::<u8>(0, &[1, 2, 3, 4]);
    let from1 = ranks.buffer::<u8>(1, &[9, 8, 7, 6]);
    let at0 = ranks.zeros::<u8>(0, 4);
    let at1 = ranks.zeros::<u8>(1, 4);
    let (c0, c1) = (&ranks.comms[0], &ranks.comms[1]);
    let (s0, s1) = (&ranks.streams[0], &ranks.streams[1]);
    group(|| {
        c0.send(&from0, 0, DataType::Uint8, 1, s0)?;
        c1.recv(&at1, 0, DataType::Uint8, 0, s1)?;
        c1.send(&from1, 2, DataType::Uint8, 0, s1)?; // the first 2 only
        c0.recv(&at0, 2, DataType::Uint8, 1, s0)
    })
    .unwrap();
    assert_eq!(ranks.values::<u8>(1, &at1), vec![1, 2, 3, 4]);
    assert_eq!(ranks.values::<u8>(0, &at0), vec![9, 8, 0, 0]);
}

pub fn group_closure_and_guard(devices: &[Device]) {
    assert_eq!(Group::depth(), 0);
    let outer = Group::start().unwrap();
    {
        let _inner = Group::start().unwrap();
        assert_eq!(Group::depth(), 2);
    } // dropped: ended quietly
    assert_eq!(Group::depth(), 1);
    outer.end().unwrap();
    assert_eq!(Group::depth(), 0);

    // The closure's error comes back, and the group is ended all the same.
    let ranks = Ranks::new(devices);
    let small = ranks.zeros::<f32>(0, 2);
    let large = ranks.zeros::<f32>(0, 4);
    let e = group(|| {
        assert_eq!(Group::depth(), 1);
        ranks.comms[0].all_reduce(&small, &large, 0, DataType::Float32, ReduceOp::Sum, &ranks.streams[0])
    })
    .unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert_eq!(Group::depth(), 0);
    assert_eq!(group(|| Ok(7)).unwrap(), 7);
}

pub fn argument_errors(devices: &[Device]) {
    let ranks = Ranks::new(devices);
    let c = &ranks.comms[0];
    let s = &ranks.streams[0];
    let small = ranks.zeros::<f32>(0, 2);
    let large = ranks.zeros::<f32>(0, 4);
    let other_device = ranks.zeros::<f32>(1, 2);
    let status = |r: cucore::Result<()>| r.unwrap_err().status;
    // Count 0: the sizes must match; an explicit count must fit.
    assert_eq!(status(c.all_reduce(&small, &large, 0, DataType::Float32, ReduceOp::Sum, s)), Status::InvalidArgument);
    assert_eq!(status(c.all_reduce(&small, &small, 3, DataType::Float32, ReduceOp::Sum, s)), Status::InvalidArgument);
    // A buffer or a stream of another device.
    assert_eq!(
        status(c.all_reduce(&other_device, &other_device, 0, DataType::Float32, ReduceOp::Sum, s)),
        Status::InvalidArgument
    );
    assert_eq!(
        status(c.all_reduce(&small, &small, 0, DataType::Float32, ReduceOp::Sum, &ranks.streams[1])),
        Status::InvalidArgument
    );
    // All-gather's receive buffer must be rank_count times the send buffer.
    assert_eq!(status(c.all_gather(&small, &small, 0, DataType::Float32, s)), Status::InvalidArgument);
    // A root or peer out of range.
    assert_eq!(status(c.broadcast(Some(&small), &small, 0, DataType::Float32, 2, s)), Status::InvalidArgument);
    assert_eq!(status(c.send(&small, 0, DataType::Float32, -1, s)), Status::InvalidArgument);
    assert_eq!(status(c.recv(&small, 0, DataType::Float32, 2, s)), Status::InvalidArgument);
    // A rank out of range; no devices; a device named twice.
    let id = CommunicatorId::create().unwrap();
    assert_eq!(Communicator::create(&devices[0], &id, 2, 2).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(Communicator::create(&devices[0], &id, 0, 0).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(Communicator::create_all(&[]).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(
        Communicator::create_all(&[devices[0].clone(), devices[0].clone()]).unwrap_err().status,
        Status::InvalidArgument
    );
}

pub fn device_peer_access(devices: &[Device]) {
    let (d0, d1) = (&devices[0], &devices[1]);
    assert_eq!(d0.enable_peer_access(d0).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(d0.disable_peer_access(d0).unwrap_err().status, Status::InvalidArgument);
    if !d0.can_access_peer(d1).unwrap() {
        assert_eq!(d0.enable_peer_access(d1).unwrap_err().status, Status::NotSupported);
        skip("device_peer_access", "device 0 cannot reach device 1's memory directly (the errors were checked)");
        return;
    }
    d0.enable_peer_access(d1).unwrap();
    d0.enable_peer_access(d1).unwrap(); // twice is no error
    d0.disable_peer_access(d1).unwrap();
    assert_eq!(d0.disable_peer_access(d1).unwrap_err().status, Status::InvalidState, "not enabled any more");
    if d1.can_access_peer(d0).unwrap() {
        d1.enable_peer_access(d0).unwrap();
        d1.disable_peer_access(d0).unwrap();
        d1.enable_peer_access(d0).unwrap();
    }
    // Left enabled, as NCCL may have enabled it for its own transfers between the two.
    d0.enable_peer_access(d1).unwrap();
}

pub fn handles_are_send_and_sync(_devices: &[Device]) {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Communicator>();
    send_sync::<CommunicatorId>();
}
