//! The green-context scenarios, run by two test binaries: `device_resources.rs` on the driver the
//! process finds (a real GPU; they skip without one) and `device_resources_fake_driver.rs`
//! against the tests' fake driver (16 SMs per device, minimum partition 2, alignment 2). The
//! scenarios that run device code (%smid of every block) run on a real GPU only.
#![allow(dead_code)]

use std::collections::HashSet;

use cucore::{ContextOptions, SmResource, SmResourceOptions, WorkqueueResourceOptions, WorkqueueSharingScope};

use crate::common::*;

/// Where the scenarios run.
#[derive(Clone, Copy, Debug)]
pub struct Env {
    /// The tests' fake driver (no device code runs).
    pub fake: bool,
}

/// Defines one test per scenario, each under the process-wide lock.
macro_rules! green_tests {
    ($setup:path) => {
        green_tests!(@each $setup;
            splits_make_the_groups_asked_for,
            bad_splits_name_the_rule,
            green_contexts_run_streams_events_and_allocations,
            release_order_never_matters,
            workqueues_follow_the_driver,
            a_kernel_runs_only_on_its_green_contexts_sms,
            two_green_contexts_of_one_split_use_disjoint_sms,
        );
    };
    (@each $setup:path; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let _serial = crate::common::serial();
                if let Some((dev, env)) = $setup(stringify!($name)) {
                    crate::scenarios::$name(stringify!($name), &dev, env);
                }
            }
        )*
    };
}

/// The smallest group the rules allow: the minimum partition rounded up to the alignment.
fn group_size(sm: &SmResource) -> u32 {
    let i = sm.info().unwrap();
    (i.min_partition_size + i.coscheduled_alignment - 1) / i.coscheduled_alignment * i.coscheduled_alignment
}

/// The device's SMs, or None (printed) where green contexts are missing or too few SMs.
fn device_sms(test: &str, dev: &Device) -> Option<SmResource> {
    let sm = supported(test, "green contexts", dev.resources().sm())?;
    if sm.sm_count().unwrap() < 2 * group_size(&sm) {
        skip(test, "too few SMs for two groups");
        return None;
    }
    Some(sm)
}

pub fn splits_make_the_groups_asked_for(test: &str, dev: &Device, env: Env) {
    let Some(sm) = device_sms(test, dev) else { return };
    let before = live_counts();
    {
        let info = sm.info().unwrap();
        if env.fake {
            assert_eq!((info.sm_count, info.min_partition_size, info.coscheduled_alignment), (16, 2, 2));
        } else {
            assert_eq!(info.sm_count as i32, dev.attribute(DeviceAttribute::MULTIPROCESSOR_COUNT).unwrap());
        }
        let k = group_size(&sm);
        let options = SmResourceOptions::default().sm_count(k).group_count(2);
        let planned = sm.dry_run(&options).unwrap();
        assert_eq!((planned.group_count, planned.group_sm_count), (2, k));
        let (groups, rest) = sm.split(&options).unwrap();
        assert_eq!(groups.len(), 2);
        for g in &groups {
            assert_eq!(g.sm_count().unwrap(), k);
        }
        assert_eq!(rest.sm_count().unwrap(), info.sm_count - 2 * k);
        assert_eq!(planned.remainder_sm_count, rest.sm_count().unwrap());
        let (every, rest) = sm.split(&SmResourceOptions::default().sm_count(k)).unwrap();
        assert_eq!(every.len() as u32 * k + rest.sm_count().unwrap(), info.sm_count);
    }
    assert_eq!(live_counts(), before, "no resource outlives its values");
}

pub fn bad_splits_name_the_rule(test: &str, dev: &Device, _env: Env) {
    let Some(sm) = device_sms(test, dev) else { return };
    let info = sm.info().unwrap();
    let k = group_size(&sm);
    let invalid = |options: SmResourceOptions, rule: &str| {
        let e = sm.split(&options).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{}", e.message);
        assert!(e.message.contains(rule), "{}", e.message);
    };
    invalid(SmResourceOptions::default().sm_count(info.sm_count + info.coscheduled_alignment), "more SMs than");
    invalid(SmResourceOptions::default().sm_count(k).group_count(info.sm_count / k + 1), "more than the resource's");
    if info.min_partition_size > 1 {
        invalid(SmResourceOptions::default().sm_count(info.min_partition_size - 1), "minimum partition size");
    }
    if info.coscheduled_alignment > 1 {
        invalid(SmResourceOptions::default().sm_count(k + 1), "co-scheduled alignment");
    }
    let (a, _) = sm.split(&SmResourceOptions::default().sm_count(k).group_count(1)).unwrap();
    let (b, _) = sm.split(&SmResourceOptions::default().sm_count(k).group_count(1)).unwrap();
    let e = a[0].split(&SmResourceOptions::default()).unwrap_err();
    assert!(e.message.contains("earlier split"), "{}", e.message);
    let e = dev.create_context(&ContextOptions::default().sm(a[0].clone()).sm(b[0].clone())).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("one split"), "{}", e.message);
}

pub fn green_contexts_run_streams_events_and_allocations(test: &str, dev: &Device, _env: Env) {
    let Some(sm) = device_sms(test, dev) else { return };
    let k = group_size(&sm);
    let (groups, _) = sm.split(&SmResourceOptions::default().sm_count(k).group_count(1)).unwrap();
    let green = dev.create_context(&ContextOptions::default().sm(groups[0].clone())).unwrap();
    assert!(green.is_green().unwrap() && !green.is_primary().unwrap());
    assert!(!green.green_handle().unwrap().is_null());
    assert!(!dev.primary_context().unwrap().is_green().unwrap());
    assert_eq!(green.resources().sm().unwrap().sm_count().unwrap(), k);
    let s = green.create_stream(StreamOptions::default()).unwrap();
    assert!(s.is_nonblocking().unwrap());
    assert_eq!(s.resources().sm().unwrap().sm_count().unwrap(), k);
    let e = green.create_stream(StreamOptions { nonblocking: false, ..StreamOptions::default() }).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    let data = pattern(4096, 7);
    let b = dev.allocate(data.len() as u64, &s).unwrap();
    b.copy_from_host(0, &data, &s).unwrap();
    let event = green.create_event(EventOptions::default()).unwrap();
    event.record(&s).unwrap();
    event.synchronize().unwrap();
    assert_eq!(b.to_vec(&s).unwrap(), data);
}

pub fn release_order_never_matters(test: &str, dev: &Device, _env: Env) {
    let Some(sm) = device_sms(test, dev) else { return };
    let k = group_size(&sm);
    let (groups, rest) = sm.split(&SmResourceOptions::default().sm_count(k).group_count(1)).unwrap();
    let green = dev.create_context(&ContextOptions::default().sm(groups[0].clone())).unwrap();
    let s = green.create_stream(StreamOptions::default()).unwrap();
    let event = green.create_event(EventOptions::default()).unwrap();
    let b = dev.allocate(64, &s).unwrap();
    drop(green);
    drop(groups);
    drop(rest);
    drop(sm);
    b.fill(9, 1, &s).unwrap();
    event.record(&s).unwrap();
    event.synchronize().unwrap();
    assert_eq!(b.to_vec(&s).unwrap(), vec![9u8; 64]);
    assert_eq!(s.resources().sm().unwrap().sm_count().unwrap(), k);
    drop(s);
    drop(event);
    drop(b);
}

pub fn workqueues_follow_the_driver(_test: &str, dev: &Device, env: Env) {
    if cucore::driver_version().unwrap() >= 13010 && !env.fake {
        let wq = dev.resources().workqueue().unwrap();
        assert!(wq.concurrency_limit().unwrap() >= 1);
        wq.configure(&WorkqueueResourceOptions::default().sharing_scope(WorkqueueSharingScope::GreenCtxBalanced))
            .unwrap();
        assert_eq!(wq.sharing_scope().unwrap(), WorkqueueSharingScope::GreenCtxBalanced);
        assert_eq!(wq.device().unwrap(), *dev);
        return;
    }
    let e = dev.resources().workqueue().unwrap_err();
    assert_eq!(e.status, Status::NotSupported);
    assert!(e.message.contains("CUDA 13.1"), "{}", e.message);
}

// ---- a real GPU: where blocks run ---------------------------------------------------------------

const SMID: &str = r#"
extern "C" __global__ void record_smid(unsigned *smids, unsigned *values, unsigned n, long long spin) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (threadIdx.x == 0) smids[blockIdx.x] = smid;
    const long long start = clock64();
    while (clock64() - start < spin) {
    }
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) values[i] = i * 3u + 1u;
}
"#;
const THREADS: u32 = 128;

/// Queues record_smid with `blocks` blocks on `s` (each block spins ~0.1 ms, so they spread over
/// every SM allowed); `read` waits and returns the distinct SM ids after checking the values.
struct Pending {
    smids: Buffer,
    values: Buffer,
    n: u32,
}

fn queue(dev: &Device, k: &Kernel, s: &Stream, blocks: u32) -> Pending {
    let n = blocks * THREADS;
    let smids = dev.allocate(4 * blocks as u64, s).unwrap();
    let values = dev.allocate(4 * n as u64, s).unwrap();
    smids.fill(0, 1, s).unwrap();
    values.fill(0, 1, s).unwrap();
    let spin: i64 = 200_000;
    launch(s, &LaunchConfig::new(blocks, THREADS), k, &[&smids, &values, &n, &spin]).unwrap();
    Pending { smids, values, n }
}

impl Pending {
    fn read(&self, s: &Stream) -> HashSet<u32> {
        let values = u32s(&self.values.to_vec(s).unwrap());
        assert_eq!(values.len(), self.n as usize);
        for (i, v) in values.iter().enumerate() {
            assert_eq!(*v, i as u32 * 3 + 1, "the kernel ran (element {})", i);
        }
        u32s(&self.smids.to_vec(s).unwrap()).into_iter().collect()
    }
}

fn smid_kernel(test: &str, dev: &Device, env: Env) -> Option<Kernel> {
    if env.fake {
        skip(test, "needs a real GPU to run device code (this is the fake driver)");
        return None;
    }
    if !nvrtc(test) {
        return None;
    }
    Some(gpu_kernel(dev, SMID, "record_smid"))
}

pub fn a_kernel_runs_only_on_its_green_contexts_sms(test: &str, dev: &Device, env: Env) {
    let Some(sm) = device_sms(test, dev) else { return };
    let Some(kernel) = smid_kernel(test, dev, env) else { return };
    let k = group_size(&sm);
    let blocks = sm.sm_count().unwrap() * 4;
    let (groups, _) = sm.split(&SmResourceOptions::default().sm_count(k).group_count(1)).unwrap();
    let green = dev.create_context(&ContextOptions::default().sm(groups[0].clone())).unwrap();
    let s = green.create_stream(StreamOptions::default()).unwrap();
    let used = queue(dev, &kernel, &s, blocks).read(&s);
    assert!(!used.is_empty() && used.len() <= k as usize, "a green context of {} SMs used {} SMs", k, used.len());
    let p = dev.create_stream(StreamOptions::default()).unwrap();
    assert!(queue(dev, &kernel, &p, blocks).read(&p).len() > k as usize, "the primary context spreads wider");
}

pub fn two_green_contexts_of_one_split_use_disjoint_sms(test: &str, dev: &Device, env: Env) {
    let Some(sm) = device_sms(test, dev) else { return };
    let Some(kernel) = smid_kernel(test, dev, env) else { return };
    let k = group_size(&sm);
    let blocks = sm.sm_count().unwrap() * 4;
    let (groups, _) = sm.split(&SmResourceOptions::default().sm_count(k).group_count(2)).unwrap();
    let streams: Vec<Stream> = groups
        .iter()
        .map(|g| {
            let c = dev.create_context(&ContextOptions::default().sm(g.clone())).unwrap();
            c.create_stream(StreamOptions::default()).unwrap()
        })
        .collect();
    // Both in flight before either is read.
    let pending: Vec<Pending> = streams.iter().map(|s| queue(dev, &kernel, s, blocks)).collect();
    let a = pending[0].read(&streams[0]);
    let b = pending[1].read(&streams[1]);
    assert!(a.len() <= k as usize && b.len() <= k as usize);
    let shared: Vec<&u32> = a.intersection(&b).collect();
    assert!(shared.is_empty(), "SMs {:?} ran blocks of both green contexts", shared);
}
