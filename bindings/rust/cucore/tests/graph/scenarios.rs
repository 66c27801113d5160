//! The graph scenarios, run by two test binaries: `graph.rs` on the driver the process finds (a
//! real GPU; they skip without one) and `graph_fake_driver.rs` against the tests' fake driver
//! (tests/fake_driver), so that they run through the real libcucore on every machine.
//! `graph_tests!(setup)` defines one `#[test]` per scenario; `setup(test)` gives the device and
//! the [`Env`], or None after printing why the test is skipped.
//!
//! The fake driver runs no device code: scenarios that check what kernels compute run on a real
//! GPU only (and need NVRTC); kernel nodes' structure and parameters run on both, with a fake
//! image's kernel on the fake driver, and so do the conditional scenarios, whose kernels the fake
//! driver imitates (its "kernel behaviours" that set a condition).
#![allow(dead_code)]

use std::collections::HashSet;

use cucore::{
    CaptureMode, CaptureStatus, GraphAllocInfo, GraphAllocOptions, GraphBuilder, GraphCompleteOptions, GraphCondition,
    GraphConditionalType, GraphDebugPrintOptions, GraphDefinition, GraphMemoryAttribute, GraphMemoryResource,
    GraphNode, GraphNodeType, GraphUpdateResult, MemcpyParams, MemsetParams,
};

use crate::common::*;

// Kernel nodes and the scenarios that run device code (graph/kernels.rs).
#[path = "kernels.rs"]
mod kernels;
// Node updates replacing an event or a child graph (graph/updates.rs).
#[path = "updates.rs"]
mod updates;
pub use kernels::*;
pub use updates::*;

/// Where the scenarios run.
#[derive(Clone, Copy, Debug)]
pub struct Env {
    /// The tests' fake driver (no device code runs).
    pub fake: bool,
}

/// Defines one test per scenario, each under the process-wide lock, with `$setup` giving the
/// device and the [`Env`] (or None: skipped).
macro_rules! graph_tests {
    ($setup:path) => {
        graph_tests!(@each $setup;
            definition_structure,
            definition_edges_clone_and_destroy,
            host_callbacks_run_in_order,
            captured_host_callbacks_run_in_order,
            disabling_other_kinds_is_refused,
            memcpy_and_memset_nodes_move_data,
            per_node_updates_and_enabling,
            whole_graph_update_takes_new_parameters,
            update_with_changed_topology_is_refused,
            node_parameter_errors,
            capture_copies_and_fills,
            synchronize_during_capture_is_refused,
            split_branches_run_before_the_join,
            end_without_join_is_refused,
            closures_are_dropped_once_when_the_graphs_are_gone,
            release_order_never_matters,
            graph_memory_inside_a_graph,
            allocation_nodes,
            dot_file_names_the_nodes,
            kernel_nodes,
            conditional_nodes_structure,
            captured_kernel_chain_computes,
            kernel_argument_updates_reach_the_next_launch,
            kernel_argument_updates_choose_the_branch,
            while_loop_counts_to_n,
            if_else_takes_the_chosen_branch,
            event_nodes_take_a_new_event,
            child_graph_nodes_take_a_new_graph,
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

// ---- Helpers ------------------------------------------------------------------------------------------

fn stream(dev: &Device) -> Stream {
    dev.create_stream(StreamOptions::default()).unwrap()
}

/// `len` bytes of device memory holding `bytes` repeated.
fn buffer_of(dev: &Device, s: &Stream, len: usize, byte: u8) -> Buffer {
    let b = dev.allocate(len as u64, s).unwrap();
    b.copy_from_host(0, &vec![byte; len], s).unwrap();
    b
}

fn bytes(b: &Buffer, s: &Stream) -> Vec<u8> {
    b.to_vec(s).unwrap()
}

/// Calls `done` until it holds, draining the library's release queue between tries (the last
/// reference a graph's user objects hold is dropped on the library's release thread); at most
/// 10 s, so a failing test never hangs.
fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        // Counting live objects waits for the release queue to drain.
        let _ = live_object_count(ObjectType::Any);
        if done() {
            return true;
        }
        if start.elapsed() > Duration::from_secs(10) {
            return false;
        }
        thread::sleep(Duration::from_millis(1));
    }
}

/// Counts its drops: a closure capturing one is dropped once when `drops()` is 1.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// The live counts of the graph objects.
fn graph_counts() -> [usize; 4] {
    [
        live_object_count(ObjectType::GraphDefinition).unwrap(),
        live_object_count(ObjectType::GraphNode).unwrap(),
        live_object_count(ObjectType::Graph).unwrap(),
        live_object_count(ObjectType::GraphBuilder).unwrap(),
    ]
}

fn set(nodes: Vec<GraphNode>) -> HashSet<GraphNode> {
    nodes.into_iter().collect()
}

fn set_of(nodes: &[&GraphNode]) -> HashSet<GraphNode> {
    nodes.iter().map(|n| (*n).clone()).collect()
}

fn u32_bytes(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

// ---- Definitions: structure -----------------------------------------------------------------------------

/// Every kind of node the definition adds, with its kind, its edges and its definition.
pub fn definition_structure(_test: &str, dev: &Device, _env: Env) {
    let s = stream(dev);
    let buf = buffer_of(dev, &s, 256, 0);
    let out = buffer_of(dev, &s, 256, 0);
    let event = dev.create_event(EventOptions::default()).unwrap();
    let def = GraphDefinition::create(dev).unwrap();
    assert!(def.is_owned().unwrap());
    assert_eq!(def.device().unwrap(), *dev);
    assert!(def.nodes().unwrap().is_empty());
    assert!(def.edges().unwrap().is_empty());

    let root = def.add_empty(&[]).unwrap();
    let fill = def.add_memset(&[&root], &MemsetParams::new(&buf, 7, 1, 256)).unwrap();
    let copy = def.add_memcpy(&[&fill], &MemcpyParams::new(&out, &buf, 256)).unwrap();
    let record = def.add_event_record(&[&copy], &event).unwrap();
    let wait = def.add_event_wait(&[&root], &event).unwrap();
    let child_def = dev.create_graph_definition().unwrap();
    child_def.add_empty(&[]).unwrap();
    let child = def.add_child_graph(&[&record, &wait], &child_def).unwrap();
    let host = def.add_host_callback(&[&child], || {}).unwrap();

    for (node, kind) in [
        (&root, GraphNodeType::Empty),
        (&fill, GraphNodeType::Memset),
        (&copy, GraphNodeType::Memcpy),
        (&record, GraphNodeType::EventRecord),
        (&wait, GraphNodeType::EventWait),
        (&child, GraphNodeType::ChildGraph),
        (&host, GraphNodeType::HostCallback),
    ] {
        assert_eq!(node.node_type().unwrap(), kind, "{:?}", node);
        assert_eq!(node.definition().unwrap(), def, "a node's definition");
        assert!(!node.handle().unwrap().is_null());
    }
    assert_eq!(set(def.nodes().unwrap()), set_of(&[&root, &fill, &copy, &record, &wait, &child, &host]));
    let edges: HashSet<(GraphNode, GraphNode)> = def.edges().unwrap().into_iter().collect();
    let expected: HashSet<(GraphNode, GraphNode)> = [
        (&root, &fill),
        (&fill, &copy),
        (&copy, &record),
        (&root, &wait),
        (&record, &child),
        (&wait, &child),
        (&child, &host),
    ]
    .iter()
    .map(|(a, b)| ((*a).clone(), (*b).clone()))
    .collect();
    assert_eq!(edges, expected);
    assert_eq!(set(root.dependents().unwrap()), set_of(&[&fill, &wait]));
    assert_eq!(set(child.dependencies().unwrap()), set_of(&[&record, &wait]));
    assert!(root.dependencies().unwrap().is_empty());
    assert!(host.dependents().unwrap().is_empty());

    // The child graph node runs a copy of child_def: its body, owned by the node.
    let bodies = child.bodies().unwrap();
    assert_eq!(bodies.len(), 1);
    assert!(!bodies[0].is_owned().unwrap());
    assert_eq!(bodies[0].device().unwrap(), *dev);
    assert_ne!(bodies[0], child_def, "a copy, not the definition given");
    assert_eq!(bodies[0].nodes().unwrap().len(), 1);
    assert_eq!(bodies[0].nodes().unwrap()[0].node_type().unwrap(), GraphNodeType::Empty);
    // Later changes to child_def do not reach the copy.
    child_def.add_empty(&[]).unwrap();
    assert_eq!(child.bodies().unwrap()[0].nodes().unwrap().len(), 1);
    // Other kinds have no bodies.
    assert_eq!(fill.bodies().unwrap_err().status, Status::InvalidArgument);
    assert_eq!(fill.alloc_info().unwrap_err().status, Status::InvalidArgument);
    assert_eq!(fill.kernel_config().unwrap_err().status, Status::InvalidArgument);
    s.synchronize().unwrap();
}

/// Edges added and removed, a clone and its nodes, a destroyed node.
pub fn definition_edges_clone_and_destroy(_test: &str, dev: &Device, _env: Env) {
    let def = GraphDefinition::create(dev).unwrap();
    let a = def.add_empty(&[]).unwrap();
    let b = def.add_empty(&[&a]).unwrap();
    let c = def.add_empty(&[&a]).unwrap();
    let d = def.add_empty(&[&b, &c]).unwrap();

    c.remove_dependent(&d).unwrap();
    assert_eq!(set(d.dependencies().unwrap()), set_of(&[&b]));
    assert_eq!(c.remove_dependent(&d).unwrap_err().status, Status::Cuda, "no such edge");
    c.add_dependent(&d).unwrap();
    assert_eq!(set(d.dependencies().unwrap()), set_of(&[&b, &c]));
    assert_eq!(c.add_dependent(&d).unwrap_err().status, Status::Cuda, "the edge exists");
    let e = a.add_dependent(&a).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    let other = GraphDefinition::create(dev).unwrap();
    let foreign = other.add_empty(&[]).unwrap();
    assert_eq!(a.add_dependent(&foreign).unwrap_err().status, Status::InvalidArgument);
    assert!(def.add_empty(&[&foreign]).is_err(), "a dependency of another definition");

    let clone = def.clone_definition().unwrap();
    assert_ne!(clone, def);
    assert!(clone.is_owned().unwrap());
    assert_eq!(clone.nodes().unwrap().len(), 4);
    assert_eq!(clone.edges().unwrap().len(), 4);
    let d2 = d.find_in_clone(&clone).unwrap();
    assert_ne!(d2, d);
    assert_eq!(d2.definition().unwrap(), clone);
    assert_eq!(
        set(d2.dependencies().unwrap()),
        set_of(&[&b.find_in_clone(&clone).unwrap(), &c.find_in_clone(&clone).unwrap()])
    );
    assert!(d.find_in_clone(&other).is_err(), "not a clone of d's definition");

    // Equal values hash alike: a node found again through a listing is the same node.
    let listed: HashSet<GraphNode> = def.nodes().unwrap().into_iter().collect();
    assert!(listed.contains(&d) && listed.contains(&a));
    let again = def.nodes().unwrap();
    assert!(again.iter().any(|n| *n == c && n.as_raw() != c.as_raw()), "a new handle of the same node");

    c.destroy().unwrap();
    for e in [c.node_type().unwrap_err(), c.destroy().unwrap_err(), c.handle().unwrap_err()] {
        assert_eq!(e.status, Status::InvalidState, "{}", e);
    }
    assert_eq!(def.nodes().unwrap().len(), 3);
    assert_eq!(set(d.dependencies().unwrap()), set_of(&[&b]), "its edges went with it");
    assert_eq!(clone.nodes().unwrap().len(), 4, "the clone keeps its own");
    assert!(c == c.clone(), "a destroyed node equals its own clones");
    assert!(c != d);
}

// ---- Host callbacks ---------------------------------------------------------------------------------------

/// Host callback nodes run in dependency order, at every launch.
pub fn host_callbacks_run_in_order(_test: &str, dev: &Device, _env: Env) {
    let order = Arc::new(Mutex::new(Vec::new()));
    let def = GraphDefinition::create(dev).unwrap();
    let push = |n: u32| {
        let order = order.clone();
        move || order.lock().unwrap().push(n)
    };
    let first = def.add_host_callback(&[], push(1)).unwrap();
    let second = def.add_host_callback(&[&first], push(2)).unwrap();
    def.add_host_callback(&[&second], push(3)).unwrap();
    let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
    let s = stream(dev);
    graph.launch(&s).unwrap();
    graph.launch(&s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(*order.lock().unwrap(), vec![1, 2, 3, 1, 2, 3]);

    // Replaced in the graph only, then in the definition (seen by graphs made afterwards).
    graph.set_host_callback_node(&second, push(20)).unwrap();
    second.set_host_callback(push(200)).unwrap();
    order.lock().unwrap().clear();
    graph.launch(&s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(*order.lock().unwrap(), vec![1, 20, 3]);
    let newer = def.instantiate(&GraphCompleteOptions::default()).unwrap();
    order.lock().unwrap().clear();
    newer.launch(&s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(*order.lock().unwrap(), vec![1, 200, 3]);
}

/// Only kernel, copy and fill nodes can be disabled; other kinds are refused as arguments.
pub fn disabling_other_kinds_is_refused(_test: &str, dev: &Device, _env: Env) {
    let def = GraphDefinition::create(dev).unwrap();
    let host = def.add_host_callback(&[], || {}).unwrap();
    let empty = def.add_empty(&[&host]).unwrap();
    let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
    for node in [&host, &empty] {
        let e = graph.set_node_enabled(node, false).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{:?}: {}", node, e);
        let e = graph.node_enabled(node).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{:?}: {}", node, e);
    }
}

/// Host functions captured from a stream run in stream order with the builder's callbacks.
pub fn captured_host_callbacks_run_in_order(_test: &str, dev: &Device, _env: Env) {
    let order = Arc::new(Mutex::new(Vec::new()));
    let builder = dev.create_graph_builder().unwrap();
    builder.begin_building(CaptureMode::default()).unwrap();
    let s = builder.stream().unwrap();
    {
        let order = order.clone();
        builder.callback(move || order.lock().unwrap().push(1)).unwrap();
    }
    {
        let order = order.clone();
        s.launch_host_func(move || order.lock().unwrap().push(2)).unwrap();
    }
    {
        let order = order.clone();
        builder.callback(move || order.lock().unwrap().push(3)).unwrap();
    }
    assert!(order.lock().unwrap().is_empty(), "captured, not run");
    builder.end_building().unwrap();
    let nodes = builder.definition().unwrap().nodes().unwrap();
    assert_eq!(nodes.len(), 3);
    assert!(nodes.iter().all(|n| n.node_type().unwrap() == GraphNodeType::HostCallback));
    let graph = builder.complete(&GraphCompleteOptions::default()).unwrap();
    let run = stream(dev);
    graph.launch(&run).unwrap();
    run.synchronize().unwrap();
    assert_eq!(*order.lock().unwrap(), vec![1, 2, 3]);
}

// ---- Copies and fills ----------------------------------------------------------------------------------------

/// A fill then a copy: the data arrives, at every launch, and 2D fills leave the pitch alone.
pub fn memcpy_and_memset_nodes_move_data(_test: &str, dev: &Device, _env: Env) {
    let s = stream(dev);
    let buf = buffer_of(dev, &s, 256, 0);
    let out = buffer_of(dev, &s, 256, 0);
    let def = GraphDefinition::create(dev).unwrap();
    let fill = def.add_memset(&[], &MemsetParams::new(&buf, 0x1122_3344, 4, 64)).unwrap();
    def.add_memcpy(&[&fill], &MemcpyParams::new(&out, &buf, 256)).unwrap();
    let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
    assert_eq!(bytes(&out, &s), vec![0; 256], "instantiation runs nothing");
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&out, &s), u32_bytes(&[0x1122_3344; 64]));
    out.copy_from_host(0, &[0u8; 256], &s).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&out, &s), u32_bytes(&[0x1122_3344; 64]), "again at the next launch");

    // 3 rows of 4 bytes, 16 bytes apart, from byte 8; a copy node with offsets.
    let def = GraphDefinition::create(dev).unwrap();
    let fill = def.add_memset(&[], &MemsetParams::new(&buf, 0x9, 1, 4).offset(8).rows(3, 16)).unwrap();
    def.add_memcpy(&[&fill], &MemcpyParams::new(&out, &buf, 64).dst_offset(100).src_offset(0)).unwrap();
    buf.copy_from_host(0, &[0u8; 256], &s).unwrap();
    out.copy_from_host(0, &[0u8; 256], &s).unwrap();
    def.instantiate(&GraphCompleteOptions::default()).unwrap().launch(&s).unwrap();
    let mut expected = vec![0u8; 64];
    for row in 0..3 {
        expected[8 + row * 16..8 + row * 16 + 4].copy_from_slice(&[9; 4]);
    }
    let got = bytes(&out, &s);
    assert_eq!(&got[100..164], &expected[..]);
    assert_eq!(&got[..100], &[0u8; 100][..]);
    assert_eq!(&got[164..], &[0u8; 92][..]);
}

/// Per-node updates change the graph, not the definition; a disabled node does nothing.
pub fn per_node_updates_and_enabling(_test: &str, dev: &Device, _env: Env) {
    let s = stream(dev);
    let buf = buffer_of(dev, &s, 128, 0);
    let out = buffer_of(dev, &s, 128, 0);
    let other = buffer_of(dev, &s, 128, 0x77);
    let def = GraphDefinition::create(dev).unwrap();
    let fill = def.add_memset(&[], &MemsetParams::new(&buf, 0x11, 1, 128)).unwrap();
    let copy = def.add_memcpy(&[&fill], &MemcpyParams::new(&out, &buf, 128)).unwrap();
    let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();

    graph.set_memset_node(&fill, &MemsetParams::new(&buf, 0x22, 1, 128)).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&out, &s), vec![0x22; 128]);
    // The definition still fills 0x11.
    def.instantiate(&GraphCompleteOptions::default()).unwrap().launch(&s).unwrap();
    assert_eq!(bytes(&out, &s), vec![0x11; 128]);

    assert!(graph.node_enabled(&fill).unwrap());
    graph.set_node_enabled(&fill, false).unwrap();
    assert!(!graph.node_enabled(&fill).unwrap());
    buf.copy_from_host(0, &[0x33; 128], &s).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&out, &s), vec![0x33; 128], "the disabled fill did nothing; the copy ran");
    graph.set_node_enabled(&fill, true).unwrap();

    graph.set_memcpy_node(&copy, &MemcpyParams::new(&out, &other, 32).dst_offset(64)).unwrap();
    out.copy_from_host(0, &[0u8; 128], &s).unwrap();
    graph.launch(&s).unwrap();
    let got = bytes(&out, &s);
    assert_eq!(&got[64..96], &[0x77u8; 32][..]);
    assert_eq!(&got[..64], &[0u8; 64][..]);
    assert_eq!(&got[96..], &[0u8; 32][..]);
}

/// A definition changed node by node, then the graph updated whole: the next launch uses it.
pub fn whole_graph_update_takes_new_parameters(_test: &str, dev: &Device, _env: Env) {
    let s = stream(dev);
    let buf = buffer_of(dev, &s, 64, 0);
    let def = GraphDefinition::create(dev).unwrap();
    let fill = def.add_memset(&[], &MemsetParams::new(&buf, 0x01, 1, 64)).unwrap();
    let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&buf, &s), vec![0x01; 64]);

    fill.set_memset(&MemsetParams::new(&buf, 0x02, 1, 64)).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&buf, &s), vec![0x01; 64], "the graph has not been updated yet");
    graph.update(&def).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&buf, &s), vec![0x02; 64]);

    // A clone with the same topology updates it too.
    let clone = def.clone_definition().unwrap();
    fill.find_in_clone(&clone).unwrap().set_memset(&MemsetParams::new(&buf, 0x03, 1, 64)).unwrap();
    graph.update(&clone).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&buf, &s), vec![0x03; 64]);
}

/// An update that changes the topology is refused, with the driver's verdict and a message.
pub fn update_with_changed_topology_is_refused(_test: &str, dev: &Device, _env: Env) {
    let def = GraphDefinition::create(dev).unwrap();
    let a = def.add_empty(&[]).unwrap();
    let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
    def.add_empty(&[&a]).unwrap();
    let e = graph.update(&def).unwrap_err();
    assert_eq!(e.error.status, Status::InvalidState, "{}", e);
    assert_eq!(e.result, GraphUpdateResult::TopologyChanged, "{}", e);
    assert!(e.error.message.to_lowercase().contains("topology"), "the message names the verdict: {}", e);
    let as_error: cucore::Error = e.into();
    assert_eq!(as_error.status, Status::InvalidState);
    // The graph is still usable.
    let s = stream(dev);
    graph.launch(&s).unwrap();
    s.synchronize().unwrap();
}

/// Bad node parameters are refused with the argument named, and add nothing.
pub fn node_parameter_errors(_test: &str, dev: &Device, _env: Env) {
    let s = stream(dev);
    let buf = buffer_of(dev, &s, 64, 0);
    let def = GraphDefinition::create(dev).unwrap();
    for params in [
        MemsetParams::new(&buf, 1, 1, 65),           // past the end
        MemsetParams::new(&buf, 1, 3, 4),            // element size
        MemsetParams::new(&buf, 0x100, 1, 4),        // wider than the element
        MemsetParams::new(&buf, 1, 1, 8).rows(2, 4), // pitch below the row
        MemsetParams::new(&buf, 1, 1, 8).offset(60), // offset + width past the end
    ] {
        let e = def.add_memset(&[], &params).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{:?}: {}", params, e);
        assert!(!e.message.is_empty());
    }
    let e = def.add_memcpy(&[], &MemcpyParams::new(&buf, &buf, 32).src_offset(40)).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    let closed = dev.allocate(64, &s).unwrap();
    closed.close(None).unwrap();
    let e = def.add_memcpy(&[], &MemcpyParams::new(&buf, &closed, 8)).unwrap_err();
    assert_eq!(e.status, Status::InvalidState, "{}", e);
    let e = def.add_alloc(&[], 0, &GraphAllocOptions::default()).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert_eq!(def.add_free(&[], 0).unwrap_err().status, Status::InvalidArgument);
    let e = def.add_child_graph(&[], &def).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(def.nodes().unwrap().is_empty(), "nothing was added");
    // A failed host callback node drops its closure without running it.
    let drops = Arc::new(AtomicUsize::new(0));
    let counter = DropCounter(drops.clone());
    let other = GraphDefinition::create(dev).unwrap();
    let foreign = other.add_empty(&[]).unwrap();
    assert!(def
        .add_host_callback(&[&foreign], move || {
            let _ = &counter;
        })
        .is_err());
    assert!(eventually(|| drops.load(Ordering::SeqCst) == 1), "dropped once");
    s.synchronize().unwrap();
}

// ---- Capture ---------------------------------------------------------------------------------------------------

/// Fills and copies on a builder's stream are captured, not run, and run at each launch.
pub fn capture_copies_and_fills(_test: &str, dev: &Device, _env: Env) {
    let setup = stream(dev);
    let a = buffer_of(dev, &setup, 256, 0);
    let out = buffer_of(dev, &setup, 256, 0);
    setup.synchronize().unwrap();

    let builder = dev.create_graph_builder().unwrap();
    assert!(!builder.is_building().unwrap());
    let s = builder.stream().unwrap();
    assert_eq!(s.capture_status().unwrap(), CaptureStatus::None);
    assert_eq!(builder.definition().unwrap_err().status, Status::InvalidState, "not built yet");
    builder.begin_building(CaptureMode::Global).unwrap();
    assert!(builder.is_building().unwrap());
    assert_eq!(s.capture_status().unwrap(), CaptureStatus::Active);
    assert_eq!(builder.begin_building(CaptureMode::Global).unwrap_err().status, Status::InvalidState);
    a.fill(0x5a, 1, &s).unwrap();
    out.copy_from(&a, &s).unwrap();
    builder.end_building().unwrap();
    assert!(!builder.is_building().unwrap());
    assert_eq!(s.capture_status().unwrap(), CaptureStatus::None);
    assert_eq!(bytes(&out, &setup), vec![0; 256], "captured, not run");

    let def = builder.definition().unwrap();
    let kinds: Vec<GraphNodeType> = def.nodes().unwrap().iter().map(|n| n.node_type().unwrap()).collect();
    assert!(kinds.contains(&GraphNodeType::Memset) && kinds.contains(&GraphNodeType::Memcpy), "{:?}", kinds);
    let graph = builder.complete(&GraphCompleteOptions::default().upload_stream(&setup)).unwrap();
    graph.launch(&setup).unwrap();
    assert_eq!(bytes(&out, &setup), vec![0x5a; 256]);

    // A builder on an existing stream; the stream works as before once the capture ended.
    let own = stream(dev);
    let on_stream = own.create_graph_builder().unwrap();
    assert_eq!(on_stream.stream().unwrap(), own);
    on_stream.begin_building(CaptureMode::ThreadLocal).unwrap();
    a.fill(0x6b, 1, &own).unwrap();
    on_stream.end_building().unwrap();
    let g2 = on_stream.complete(&GraphCompleteOptions::default()).unwrap();
    g2.upload(&own).unwrap();
    g2.launch(&own).unwrap();
    assert_eq!(bytes(&a, &own), vec![0x6b; 256]);
    let legacy = Stream::legacy_default(dev).unwrap();
    assert_eq!(GraphBuilder::create(&legacy).unwrap_err().status, Status::InvalidArgument);
}

/// A synchronize and a synchronous copy during a capture fail with a clear error naming the
/// call; the capture goes on, and the stream is usable after it.
pub fn synchronize_during_capture_is_refused(_test: &str, dev: &Device, _env: Env) {
    let setup = stream(dev);
    let a = buffer_of(dev, &setup, 64, 1);
    setup.synchronize().unwrap();
    let builder = dev.create_graph_builder().unwrap();
    builder.begin_building(CaptureMode::Relaxed).unwrap();
    let s = builder.stream().unwrap();
    let e = s.synchronize().unwrap_err();
    assert_eq!(e.status, Status::InvalidState, "{}", e);
    assert!(e.message.contains("cucore_stream_synchronize"), "names the call: {}", e);
    assert!(e.message.to_lowercase().contains("captur"), "says why: {}", e);
    assert_eq!(s.capture_status().unwrap(), CaptureStatus::Active, "the capture goes on");
    let mut host = [0u8; 64];
    let e = a.copy_to_host(0, &mut host, &s).unwrap_err();
    assert_eq!(e.status, Status::InvalidState, "{}", e);
    assert_eq!(host, [0u8; 64]);
    assert_eq!(s.capture_status().unwrap(), CaptureStatus::Active);
    a.fill(2, 1, &s).unwrap();
    builder.end_building().unwrap();
    s.synchronize().unwrap();
    assert_eq!(bytes(&a, &s), vec![1; 64], "the captured fill has not run");
    builder.complete(&GraphCompleteOptions::default()).unwrap().launch(&s).unwrap();
    assert_eq!(bytes(&a, &s), vec![2; 64]);
}

/// Forked branches both run before the work after their join.
pub fn split_branches_run_before_the_join(_test: &str, dev: &Device, _env: Env) {
    let setup = stream(dev);
    let x = buffer_of(dev, &setup, 64, 0);
    let y = buffer_of(dev, &setup, 64, 0);
    setup.synchronize().unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    let seen_after_join = Arc::new(AtomicUsize::new(usize::MAX));

    let builder = dev.create_graph_builder().unwrap();
    builder.begin_building(CaptureMode::Global).unwrap();
    let branches = builder.split(2).unwrap();
    assert_eq!(branches.len(), 2);
    assert_eq!(branches[0], builder, "the first is the builder itself");
    assert_ne!(branches[1].stream().unwrap(), builder.stream().unwrap(), "the second captures on a new stream");
    assert!(branches[1].is_building().unwrap());
    x.fill(0x0a, 1, &branches[0].stream().unwrap()).unwrap();
    y.fill(0x0b, 1, &branches[1].stream().unwrap()).unwrap();
    for branch in &branches {
        let done = done.clone();
        branch
            .callback(move || {
                done.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
    }
    builder.join(&[&branches[1]]).unwrap();
    assert!(!branches[1].is_building().unwrap(), "a joined builder is done");
    {
        let (done, seen) = (done.clone(), seen_after_join.clone());
        builder.callback(move || seen.store(done.load(Ordering::SeqCst), Ordering::SeqCst)).unwrap();
    }
    builder.end_building().unwrap();
    let graph = builder.complete(&GraphCompleteOptions::default()).unwrap();
    graph.launch(&setup).unwrap();
    setup.synchronize().unwrap();
    assert_eq!(seen_after_join.load(Ordering::SeqCst), 2, "both branches ran before the join");
    assert_eq!(bytes(&x, &setup), vec![0x0a; 64]);
    assert_eq!(bytes(&y, &setup), vec![0x0b; 64]);
    assert_eq!(builder.split(0).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(builder.split(2).unwrap_err().status, Status::InvalidState, "not building");
}

/// Ending with a fork not joined is refused; joining then ending works.
pub fn end_without_join_is_refused(_test: &str, dev: &Device, _env: Env) {
    let builder = dev.create_graph_builder().unwrap();
    builder.begin_building(CaptureMode::Relaxed).unwrap();
    let branches = builder.split(3).unwrap();
    assert_eq!(branches.len(), 3);
    let e = builder.end_building().unwrap_err();
    assert_eq!(e.status, Status::InvalidState, "{}", e);
    assert!(builder.is_building().unwrap());
    builder.join(&[&branches[1], &branches[2]]).unwrap();
    builder.end_building().unwrap();
    assert_eq!(builder.definition().unwrap().nodes().unwrap().len(), 0, "nothing was captured");
}

// ---- Lifetimes ------------------------------------------------------------------------------------------------------

/// A host callback's closure lives while the definition, its clones or a graph made from them
/// lives, and is dropped exactly once after the last of them.
pub fn closures_are_dropped_once_when_the_graphs_are_gone(_test: &str, dev: &Device, _env: Env) {
    let before = graph_counts();
    let runs = Arc::new(AtomicUsize::new(0));
    let drops = Arc::new(AtomicUsize::new(0));
    let s = stream(dev);
    {
        let def = GraphDefinition::create(dev).unwrap();
        let counter = DropCounter(drops.clone());
        let r = runs.clone();
        def.add_host_callback(&[], move || {
            let _ = &counter;
            r.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
        let clone = def.clone_definition().unwrap();
        let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
        drop(def);
        let _ = live_object_count(ObjectType::Any);
        assert_eq!(drops.load(Ordering::SeqCst), 0, "the clone and the graph hold the closure");
        graph.launch(&s).unwrap();
        s.synchronize().unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        drop(graph);
        let _ = live_object_count(ObjectType::Any);
        assert_eq!(drops.load(Ordering::SeqCst), 0, "the clone still holds the closure");
        let from_clone = clone.instantiate(&GraphCompleteOptions::default()).unwrap();
        drop(clone);
        from_clone.launch(&s).unwrap();
        s.synchronize().unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        drop(from_clone);
    }
    assert!(eventually(|| drops.load(Ordering::SeqCst) == 1), "dropped after the last graph went");
    let _ = live_object_count(ObjectType::Any);
    assert_eq!(drops.load(Ordering::SeqCst), 1, "exactly once");

    // A captured callback: the builder, its definition and its graph.
    let drops = Arc::new(AtomicUsize::new(0));
    {
        let builder = dev.create_graph_builder().unwrap();
        builder.begin_building(CaptureMode::Relaxed).unwrap();
        let counter = DropCounter(drops.clone());
        builder
            .callback(move || {
                let _ = &counter;
            })
            .unwrap();
        builder.end_building().unwrap();
        let graph = builder.complete(&GraphCompleteOptions::default()).unwrap();
        drop(builder);
        graph.launch(&s).unwrap();
        s.synchronize().unwrap();
        let _ = live_object_count(ObjectType::Any);
        assert_eq!(drops.load(Ordering::SeqCst), 0, "the graph holds the closure");
    }
    assert!(eventually(|| drops.load(Ordering::SeqCst) == 1));
    assert!(eventually(|| graph_counts() == before), "no graph object leaked: {:?} -> {:?}", before, graph_counts());
}

/// Objects a graph's nodes use live until the graph is gone, whatever is dropped first.
pub fn release_order_never_matters(_test: &str, dev: &Device, _env: Env) {
    let s = stream(dev);
    let out = buffer_of(dev, &s, 64, 0);
    let graph = {
        let src = buffer_of(dev, &s, 64, 0x3c);
        let def = GraphDefinition::create(dev).unwrap();
        let event = dev.create_event(EventOptions::default()).unwrap();
        let copy = def.add_memcpy(&[], &MemcpyParams::new(&out, &src, 64)).unwrap();
        def.add_event_record(&[&copy], &event).unwrap();
        let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
        // src, the event, the node and the definition go here; the graph holds what it uses.
        drop((copy, def));
        graph
    };
    s.synchronize().unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&out, &s), vec![0x3c; 64]);
    // A node outlives its definition's other handles, and a definition outlives its builder.
    let node = {
        let def = GraphDefinition::create(dev).unwrap();
        def.add_empty(&[]).unwrap()
    };
    assert_eq!(node.definition().unwrap().nodes().unwrap().len(), 1);
    let def = {
        let builder = dev.create_graph_builder().unwrap();
        builder.begin_building(CaptureMode::Relaxed).unwrap();
        out.fill(0x4d, 1, &builder.stream().unwrap()).unwrap();
        builder.end_building().unwrap();
        builder.definition().unwrap()
    };
    def.instantiate(&GraphCompleteOptions::default()).unwrap().launch(&s).unwrap();
    assert_eq!(bytes(&out, &s), vec![0x4d; 64]);
    // A builder dropped while building discards its capture and frees its stream for others.
    {
        let builder = s.create_graph_builder().unwrap();
        builder.begin_building(CaptureMode::Relaxed).unwrap();
        out.fill(0x5e, 1, &s).unwrap();
    }
    assert_eq!(s.capture_status().unwrap(), CaptureStatus::None);
    s.synchronize().unwrap();
    assert_eq!(bytes(&out, &s), vec![0x4d; 64], "the discarded capture never ran");
}

// ---- Graph memory ----------------------------------------------------------------------------------------------------

/// Graph memory allocated, used and freed inside a captured graph.
pub fn graph_memory_inside_a_graph(test: &str, dev: &Device, _env: Env) {
    let setup = stream(dev);
    let out = buffer_of(dev, &setup, 256, 0);
    setup.synchronize().unwrap();
    let mr = match supported(test, "graph memory", GraphMemoryResource::create(dev)) {
        Some(mr) => mr,
        None => return,
    };
    assert_eq!(mr.kind().unwrap(), MemoryResourceKind::Graph);
    assert!(mr.is_stream_ordered().unwrap());
    let e = mr.allocate(256, Some(&setup)).unwrap_err();
    assert_eq!(e.status, Status::InvalidState, "only on a capturing stream: {}", e);

    let builder = dev.create_graph_builder().unwrap();
    builder.begin_building(CaptureMode::Relaxed).unwrap();
    let s = builder.stream().unwrap();
    let tmp = mr.allocate(256, Some(&s)).unwrap();
    assert_eq!(tmp.size().unwrap(), 256);
    tmp.fill(0x42, 1, &s).unwrap();
    out.copy_from(&tmp, &s).unwrap();
    drop(tmp); // its free, on the capturing stream, is a node of the graph
    builder.end_building().unwrap();
    let kinds: Vec<GraphNodeType> =
        builder.definition().unwrap().nodes().unwrap().iter().map(|n| n.node_type().unwrap()).collect();
    assert!(kinds.contains(&GraphNodeType::Alloc), "{:?}", kinds);
    assert!(kinds.contains(&GraphNodeType::Free), "{:?}", kinds);
    let graph = builder.complete(&GraphCompleteOptions::default()).unwrap();
    graph.launch(&setup).unwrap();
    assert_eq!(bytes(&out, &setup), vec![0x42; 256]);
    graph.launch(&setup).unwrap();
    setup.synchronize().unwrap();

    for a in [
        GraphMemoryAttribute::UsedCurrent,
        GraphMemoryAttribute::UsedHigh,
        GraphMemoryAttribute::ReservedCurrent,
        GraphMemoryAttribute::ReservedHigh,
    ] {
        mr.attribute(a).unwrap();
    }
    assert!(mr.attribute(GraphMemoryAttribute::ReservedHigh).unwrap() >= 256, "the reserve held the allocation");
    mr.reset_attribute(GraphMemoryAttribute::UsedHigh).unwrap();
    mr.reset_attribute(GraphMemoryAttribute::ReservedHigh).unwrap();
    assert_eq!(mr.reset_attribute(GraphMemoryAttribute::UsedCurrent).unwrap_err().status, Status::InvalidArgument);
    drop(graph);
    mr.trim().unwrap();

    // The same resource through the general type, and back.
    let general: MemoryResource = mr.clone().into();
    assert_eq!(general, *mr.as_memory_resource());
    assert_eq!(GraphMemoryResource::try_from(general).unwrap(), mr);
    let pool = dev.memory_resource().unwrap();
    assert_eq!(GraphMemoryResource::try_from(pool).unwrap_err().status, Status::InvalidArgument);
}

/// Explicit allocation and free nodes: the address is fixed, the info matches.
pub fn allocation_nodes(test: &str, dev: &Device, _env: Env) {
    let def = GraphDefinition::create(dev).unwrap();
    let (alloc, address) =
        match supported(test, "allocation nodes", def.add_alloc(&[], 4096, &GraphAllocOptions::default())) {
            Some(v) => v,
            None => return,
        };
    assert_ne!(address, 0);
    assert_eq!(alloc.node_type().unwrap(), GraphNodeType::Alloc);
    assert_eq!(alloc.alloc_info().unwrap(), GraphAllocInfo { address, size: 4096 });
    let free = def.add_free(&[&alloc], address).unwrap();
    assert_eq!(free.node_type().unwrap(), GraphNodeType::Free);
    let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
    let s = stream(dev);
    graph.launch(&s).unwrap();
    graph.launch(&s).unwrap();
    s.synchronize().unwrap();
    // Memory left allocated is freed at the next launch with auto_free_on_launch.
    let def = GraphDefinition::create(dev).unwrap();
    let (alloc, _) = def.add_alloc(&[], 1024, &GraphAllocOptions::default()).unwrap();
    assert_eq!(alloc.alloc_info().unwrap().size, 1024);
    let graph = def.instantiate(&GraphCompleteOptions::default().auto_free_on_launch(true)).unwrap();
    graph.launch(&s).unwrap();
    graph.launch(&s).unwrap();
    s.synchronize().unwrap();
}

// ---- DOT output ----------------------------------------------------------------------------------------------------------

/// The DOT file names the graph's nodes.
pub fn dot_file_names_the_nodes(_test: &str, dev: &Device, _env: Env) {
    let dir = TempDir::new("graph-dot");
    let s = stream(dev);
    let buf = buffer_of(dev, &s, 64, 0);
    let def = GraphDefinition::create(dev).unwrap();
    let fill = def.add_memset(&[], &MemsetParams::new(&buf, 1, 1, 64)).unwrap();
    def.add_host_callback(&[&fill], || {}).unwrap();
    let path = dir.path().join("definition.dot");
    def.debug_dot_print(&path, &GraphDebugPrintOptions::default().verbose(true)).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("digraph"), "{}", text);
    let lower = text.to_lowercase();
    assert!(lower.contains("memset"), "names the fill node: {}", text);
    assert!(lower.contains("host"), "names the host node: {}", text);

    let builder = dev.create_graph_builder().unwrap();
    assert_eq!(
        builder.debug_dot_print(dir.path().join("x.dot"), &GraphDebugPrintOptions::default()).unwrap_err().status,
        Status::InvalidState,
        "not built yet"
    );
    builder.begin_building(CaptureMode::Relaxed).unwrap();
    buf.fill(2, 1, &builder.stream().unwrap()).unwrap();
    builder.end_building().unwrap();
    let path = dir.path().join("builder.dot");
    builder.debug_dot_print(&path, &GraphDebugPrintOptions::default().memset_node_params(true)).unwrap();
    assert!(std::fs::read_to_string(&path).unwrap().to_lowercase().contains("memset"));
    let e = def.debug_dot_print(dir.path().join("no/such/dir/x.dot"), &GraphDebugPrintOptions::default()).unwrap_err();
    assert_eq!(e.status, Status::Cuda, "{}", e);
    assert_eq!(
        def.debug_dot_print("", &GraphDebugPrintOptions::default()).unwrap_err().status,
        Status::InvalidArgument
    );
}
