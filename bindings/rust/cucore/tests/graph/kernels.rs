//! The graph scenarios with kernels (part of graph/scenarios.rs, whose helpers they use): kernel
//! nodes' structure and parameters and conditional nodes, on both drivers (a fake image's kernels
//! on the fake driver), and the scenarios that check what device code computes, on a real GPU.

use super::*;

/// `x[i] = x[i] * mul + add` for `i < n` (parameters: unsigned *, unsigned, unsigned, unsigned).
const AFFINE: &str = r#"
extern "C" __global__ void affine(unsigned *x, unsigned mul, unsigned add, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * mul + add;
}
"#;

/// A fake image with `affine`'s parameter sizes (the fake driver checks arguments against them)
/// and the fake driver's two kernels that set a condition when they run (fake_driver.hpp,
/// "Kernel behaviours").
const FAKE_IMAGE: &[u8] =
    b"FAKECUBIN\nkernel affine 8,4,4,4\nkernel fake_set_condition 8,4\nkernel fake_count_condition 8,8,4\n\0";

/// The conditional kernels, as the fake driver's behaviours do: `set_condition(handle, value)`
/// sets the condition; `count_to(handle, counter, limit)` adds 1 to `*counter` and sets the
/// condition to whether it is still below `limit` (a while body counting to `limit`). The
/// handle is a `cudaGraphConditionalHandle` (8 bytes), set with `cudaGraphSetConditional`,
/// which NVRTC declares in its builtin device runtime header; the second source declares it for
/// NVRTC versions that do not.
const CONDITIONAL_KERNELS: [&str; 2] = [
    r#"
extern "C" __global__ void set_condition(cudaGraphConditionalHandle handle, unsigned value) {
    cudaGraphSetConditional(handle, value);
}
extern "C" __global__ void count_to(cudaGraphConditionalHandle handle, int *counter, int limit) {
    int now = ++counter[0];
    cudaGraphSetConditional(handle, now < limit ? 1 : 0);
}
"#,
    r#"
typedef unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);
extern "C" __global__ void set_condition(cudaGraphConditionalHandle handle, unsigned value) {
    cudaGraphSetConditional(handle, value);
}
extern "C" __global__ void count_to(cudaGraphConditionalHandle handle, int *counter, int limit) {
    int now = ++counter[0];
    cudaGraphSetConditional(handle, now < limit ? 1 : 0);
}
"#,
];

/// `affine` on this device: a fake image's on the fake driver, compiled with NVRTC elsewhere
/// (None after printing why the test is skipped).
fn affine_kernel(test: &str, dev: &Device, env: Env) -> Option<Kernel> {
    if env.fake {
        let code = ObjectCode::create(FAKE_IMAGE, CodeType::Cubin, Some("fake_image")).unwrap();
        return Some(code.get_kernel("affine").unwrap());
    }
    if !nvrtc(test) {
        return None;
    }
    Some(gpu_kernel(dev, AFFINE, "affine"))
}

/// A scenario that runs device code: None (skipped) on the fake driver or without NVRTC.
fn real_gpu(test: &str, env: Env) -> bool {
    if env.fake {
        skip(test, "runs device code, which the fake driver cannot");
        return false;
    }
    nvrtc(test)
}

/// `(set_condition, count_to)`: the fake driver's on the fake driver, compiled with NVRTC
/// elsewhere (None after printing why the test is skipped; a failure to compile both sources
/// fails the test).
fn conditional_kernels(test: &str, dev: &Device, env: Env) -> Option<(Kernel, Kernel)> {
    if env.fake {
        let code = ObjectCode::create(FAKE_IMAGE, CodeType::Cubin, Some("fake_image")).unwrap();
        return Some((
            code.get_kernel("fake_set_condition").unwrap(),
            code.get_kernel("fake_count_condition").unwrap(),
        ));
    }
    if !nvrtc(test) {
        return None;
    }
    let options = ProgramOptions::default().arch(&sm_arch(dev));
    let mut logs = Vec::new();
    for source in CONDITIONAL_KERNELS.iter() {
        let program = Program::create(source, CodeType::Cxx, &options).unwrap();
        match program.compile(CodeType::Cubin, &[], None) {
            Ok(code) => return Some((code.get_kernel("set_condition").unwrap(), code.get_kernel("count_to").unwrap())),
            Err(e) => logs.push(format!("{}\n{}", e, program.log().unwrap_or_default())),
        }
    }
    panic!("the conditional kernels compile with neither declaration:\n{}", logs.join("\n---\n"));
}

// ---- Kernel nodes --------------------------------------------------------------------------------------------------------

/// A kernel node's configuration and kernel read back, replaced, and arguments checked.
pub fn kernel_nodes(test: &str, dev: &Device, env: Env) {
    let kernel = match affine_kernel(test, dev, env) {
        Some(k) => k,
        None => return,
    };
    let s = stream(dev);
    let x = buffer_of(dev, &s, 4 * 128, 0);
    let def = GraphDefinition::create(dev).unwrap();
    let config = LaunchConfig::new(2, 64).shared_memory_bytes(256);
    let node = def.add_kernel(&[], &config, &kernel, &[&x, &3u32, &1u32, &128u32]).unwrap();
    assert_eq!(node.node_type().unwrap(), GraphNodeType::Kernel);
    let (read, k) = node.kernel_config().unwrap();
    assert_eq!((read.grid, read.block, read.shared_memory_bytes), (config.grid, config.block, 256));
    assert_eq!(k.expect("the node's kernel").name().unwrap(), "affine");

    node.set_kernel(&LaunchConfig::new(4, 32), None, &[&x, &5u32, &0u32, &128u32]).unwrap();
    let (read, _) = node.kernel_config().unwrap();
    assert_eq!((read.grid.x, read.block.x), (4, 32));

    // Arguments are checked as for a launch: count and sizes.
    let e = def.add_kernel(&[], &config, &kernel, &[&x, &3u32, &1u32]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    let e = def.add_kernel(&[], &config, &kernel, &[&x, &3u64, &1u32, &128u32]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    let e = node.set_kernel(&config, None, &[&x]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert_eq!(def.nodes().unwrap().len(), 1);

    let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
    graph.set_kernel_node(&node, &LaunchConfig::new(4, 32), Some(&kernel), &[&x, &7u32, &9u32, &128u32]).unwrap();
    assert_eq!(graph.set_kernel_node(&node, &config, None, &[&x, &1u32]).unwrap_err().status, Status::InvalidArgument);
    assert!(graph.node_enabled(&node).unwrap());
    graph.set_node_enabled(&node, false).unwrap();
    assert!(!graph.node_enabled(&node).unwrap());
    graph.launch(&s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(bytes(&x, &s), vec![0; 4 * 128], "a disabled kernel node does nothing");

    // A captured launch is a kernel node that knows its kernel: its arguments can be replaced
    // without naming the kernel again.
    let builder = dev.create_graph_builder().unwrap();
    builder.begin_building(CaptureMode::Relaxed).unwrap();
    launch(&builder.stream().unwrap(), &config, &kernel, &[&x, &3u32, &1u32, &128u32]).unwrap();
    builder.end_building().unwrap();
    let nodes = builder.definition().unwrap().nodes().unwrap();
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].node_type().unwrap(), GraphNodeType::Kernel);
    let (read, k) = nodes[0].kernel_config().unwrap();
    assert_eq!((read.grid, read.block), (config.grid, config.block));
    assert_eq!(k.expect("the captured node's kernel").name().unwrap(), "affine");
    nodes[0].set_kernel(&config, None, &[&x, &4u32, &2u32, &128u32]).unwrap();
}

/// Conditional nodes of a definition: kinds, bodies, counts.
pub fn conditional_nodes_structure(test: &str, dev: &Device, _env: Env) {
    let def = GraphDefinition::create(dev).unwrap();
    let condition = match supported(test, "graph conditions", def.create_condition(Some(1))) {
        Some(c) => c,
        None => return,
    };
    assert_ne!(condition.handle(), 0);
    let (node, bodies) =
        match supported(test, "conditional nodes", def.add_conditional(&[], condition, GraphConditionalType::While, 1))
        {
            Some(v) => v,
            None => return,
        };
    assert_eq!(node.node_type().unwrap(), GraphNodeType::Conditional);
    assert_eq!(bodies.len(), 1);
    assert!(!bodies[0].is_owned().unwrap());
    assert_eq!(node.bodies().unwrap(), bodies);
    let inner = bodies[0].add_empty(&[]).unwrap();
    assert_eq!(inner.definition().unwrap(), bodies[0]);
    // A host node in a conditional body (the H100 server's driver takes it): the body holds its
    // closure, which runs only when the graph does.
    let drops = Arc::new(AtomicUsize::new(0));
    let counter = DropCounter(drops.clone());
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    bodies[0]
        .add_host_callback(&[], move || {
            let _ = &counter;
            r.store(true, Ordering::SeqCst);
        })
        .unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 0, "held by the body");
    assert!(!ran.load(Ordering::SeqCst));
    assert_eq!(node.bodies().unwrap()[0].nodes().unwrap().len(), 2);
    for (kind, count) in
        [(GraphConditionalType::If, 3), (GraphConditionalType::While, 2), (GraphConditionalType::Switch, 0)]
    {
        let e = def.add_conditional(&[], condition, kind, count).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument, "{:?} x {}: {}", kind, count, e);
    }
    let e = def.add_conditional(&[], GraphCondition::from_raw(0), GraphConditionalType::If, 1).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    // A condition belongs to one conditional node: a second is the driver's to refuse.
    assert!(def.add_conditional(&[&node], condition, GraphConditionalType::If, 1).is_err());
    // If with else, where the driver has it (CUDA 12.8), on a condition of its own.
    let second = def.create_condition(None).unwrap();
    match def.add_conditional(&[&node], second, GraphConditionalType::If, 2) {
        Ok((_, bodies)) => {
            assert_eq!(bodies.len(), 2);
            assert_ne!(bodies[0], bodies[1]);
        }
        Err(e) if e.status == Status::NotSupported => {}
        Err(e) => panic!("if/else: {}", e),
    }
    // A condition made while capturing; none otherwise.
    let builder = dev.create_graph_builder().unwrap();
    assert_eq!(builder.create_condition(None).unwrap_err().status, Status::InvalidState);
    builder.begin_building(CaptureMode::Relaxed).unwrap();
    let c = builder.create_condition(None).unwrap();
    let body = builder.while_loop(c).unwrap();
    assert!(body.is_building().unwrap());
    let e = builder.end_building().unwrap_err();
    assert_eq!(e.status, Status::InvalidState, "a body still building: {}", e);
    body.end_building().unwrap();
    builder.end_building().unwrap();
    let kinds: Vec<GraphNodeType> =
        builder.definition().unwrap().nodes().unwrap().iter().map(|n| n.node_type().unwrap()).collect();
    assert_eq!(kinds, vec![GraphNodeType::Conditional]);
}

// ---- Device code (a real GPU) ---------------------------------------------------------------------------------------

/// A captured chain of copies and kernels computes what the host computes.
pub fn captured_kernel_chain_computes(test: &str, dev: &Device, env: Env) {
    if !real_gpu(test, env) {
        return;
    }
    let kernel = gpu_kernel(dev, AFFINE, "affine");
    let n = 1000u32;
    let input: Vec<u32> = (0..n).collect();
    let setup = stream(dev);
    let src = dev.allocate(4 * n as u64, &setup).unwrap();
    src.copy_from_host(0, &u32_bytes(&input), &setup).unwrap();
    let work = dev.allocate(4 * n as u64, &setup).unwrap();
    let out = buffer_of(dev, &setup, 4 * n as usize, 0);
    setup.synchronize().unwrap();

    let builder = dev.create_graph_builder().unwrap();
    builder.begin_building(CaptureMode::Relaxed).unwrap();
    let s = builder.stream().unwrap();
    let config = LaunchConfig::new((n + 127) / 128, 128);
    work.copy_from(&src, &s).unwrap();
    launch(&s, &config, &kernel, &[&work, &3u32, &1u32, &n]).unwrap();
    launch(&s, &config, &kernel, &[&work, &2u32, &5u32, &n]).unwrap();
    out.copy_from(&work, &s).unwrap();
    builder.end_building().unwrap();
    assert_eq!(builder.definition().unwrap().nodes().unwrap().len(), 4);
    let graph = builder.complete(&GraphCompleteOptions::default()).unwrap();
    for _ in 0..2 {
        graph.launch(&setup).unwrap();
        let expected: Vec<u32> = input.iter().map(|v| (v * 3 + 1) * 2 + 5).collect();
        assert_eq!(u32s(&bytes(&out, &setup)), expected);
    }
}

/// A kernel argument changed in the graph (per node) and through the definition (whole update)
/// is what the next launch uses.
pub fn kernel_argument_updates_reach_the_next_launch(test: &str, dev: &Device, env: Env) {
    if !real_gpu(test, env) {
        return;
    }
    let kernel = gpu_kernel(dev, AFFINE, "affine");
    let s = stream(dev);
    let n = 256u32;
    let x = buffer_of(dev, &s, 4 * n as usize, 0);
    let def = GraphDefinition::create(dev).unwrap();
    let config = LaunchConfig::new(2, 128);
    let node = def.add_kernel(&[], &config, &kernel, &[&x, &1u32, &10u32, &n]).unwrap();
    let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(u32s(&bytes(&x, &s)), vec![10; n as usize]);

    graph.set_kernel_node(&node, &config, None, &[&x, &1u32, &20u32, &n]).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(u32s(&bytes(&x, &s)), vec![30; n as usize], "the per-node update");

    node.set_kernel(&config, None, &[&x, &2u32, &0u32, &n]).unwrap();
    graph.update(&def).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(u32s(&bytes(&x, &s)), vec![60; n as usize], "the whole-graph update");
}

/// A kernel node's argument decides an if node's branch: updated per node and through the
/// definition, the next launch takes the branch the new argument chooses (the fake driver runs
/// this kernel too).
pub fn kernel_argument_updates_choose_the_branch(test: &str, dev: &Device, env: Env) {
    let (set_condition, _) = match conditional_kernels(test, dev, env) {
        Some(k) => k,
        None => return,
    };
    let s = stream(dev);
    let out = buffer_of(dev, &s, 64, 0);
    let def = GraphDefinition::create(dev).unwrap();
    let condition = match supported(test, "graph conditions", def.create_condition(None)) {
        Some(c) => c,
        None => return,
    };
    let one = LaunchConfig::new(1, 1);
    let choose = def.add_kernel(&[], &one, &set_condition, &[&condition, &1u32]).unwrap();
    let (_, bodies) =
        match supported(test, "if nodes", def.add_conditional(&[&choose], condition, GraphConditionalType::If, 1)) {
            Some(v) => v,
            None => return,
        };
    bodies[0].add_memset(&[], &MemsetParams::new(&out, 0x11, 1, 64)).unwrap();
    let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&out, &s), vec![0x11; 64], "condition 1: the body ran");

    out.copy_from_host(0, &[0u8; 64], &s).unwrap();
    graph.set_kernel_node(&choose, &one, None, &[&condition, &0u32]).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&out, &s), vec![0; 64], "the per-node update: condition 0, the body did not run");

    choose.set_kernel(&one, None, &[&condition, &1u32]).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&out, &s), vec![0; 64], "the definition changed, the graph not yet");
    graph.update(&def).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&out, &s), vec![0x11; 64], "the whole-graph update: condition 1 again");
}

/// A while node whose body counts: the loop ends when the body's kernel clears the condition.
pub fn while_loop_counts_to_n(test: &str, dev: &Device, env: Env) {
    let (_, count_to) = match conditional_kernels(test, dev, env) {
        Some(k) => k,
        None => return,
    };
    let setup = stream(dev);
    let counter = buffer_of(dev, &setup, 4, 0);
    setup.synchronize().unwrap();
    let builder = dev.create_graph_builder().unwrap();
    builder.begin_building(CaptureMode::Relaxed).unwrap();
    let condition = match supported(test, "graph conditions", builder.create_condition(Some(1))) {
        Some(c) => c,
        None => return,
    };
    let body = match supported(test, "while nodes", builder.while_loop(condition)) {
        Some(b) => b,
        None => return,
    };
    let n = 37i32;
    launch(&body.stream().unwrap(), &LaunchConfig::new(1, 1), &count_to, &[&condition, &counter, &n]).unwrap();
    body.end_building().unwrap();
    builder.end_building().unwrap();
    let graph = builder.complete(&GraphCompleteOptions::default()).unwrap();
    graph.launch(&setup).unwrap();
    assert_eq!(u32s(&bytes(&counter, &setup)), vec![n as u32], "the body ran {} times", n);
    // The condition starts at its default (1) at every launch: the body runs once more.
    graph.launch(&setup).unwrap();
    assert_eq!(u32s(&bytes(&counter, &setup)), vec![n as u32 + 1]);
}

/// An if/else node takes the branch a kernel chose.
pub fn if_else_takes_the_chosen_branch(test: &str, dev: &Device, env: Env) {
    let (set_condition, _) = match conditional_kernels(test, dev, env) {
        Some(k) => k,
        None => return,
    };
    let setup = stream(dev);
    let out = buffer_of(dev, &setup, 64, 0);
    setup.synchronize().unwrap();
    for (choice, expected) in [(1u32, 0x11u8), (0, 0x22)] {
        let builder = dev.create_graph_builder().unwrap();
        builder.begin_building(CaptureMode::Relaxed).unwrap();
        let condition = match supported(test, "graph conditions", builder.create_condition(None)) {
            Some(c) => c,
            None => return,
        };
        let s = builder.stream().unwrap();
        launch(&s, &LaunchConfig::new(1, 1), &set_condition, &[&condition, &choice]).unwrap();
        let (then, otherwise) = match supported(test, "if/else nodes", builder.if_else(condition)) {
            Some(b) => b,
            None => {
                // Leave the builder cleanly: end the capture (its drop would discard it too).
                return;
            }
        };
        out.fill(0x11, 1, &then.stream().unwrap()).unwrap();
        out.fill(0x22, 1, &otherwise.stream().unwrap()).unwrap();
        then.end_building().unwrap();
        otherwise.end_building().unwrap();
        builder.end_building().unwrap();
        builder.complete(&GraphCompleteOptions::default()).unwrap().launch(&setup).unwrap();
        assert_eq!(bytes(&out, &setup), vec![expected; 64], "condition {}", choice);
    }
    // An if without else: nothing runs when the condition is 0.
    out.copy_from_host(0, &[0u8; 64], &setup).unwrap();
    let builder = dev.create_graph_builder().unwrap();
    builder.begin_building(CaptureMode::Relaxed).unwrap();
    let condition = builder.create_condition(Some(0)).unwrap();
    let then = builder.if_then(condition).unwrap();
    out.fill(0x33, 1, &then.stream().unwrap()).unwrap();
    then.end_building().unwrap();
    builder.end_building().unwrap();
    builder.complete(&GraphCompleteOptions::default()).unwrap().launch(&setup).unwrap();
    assert_eq!(bytes(&out, &setup), vec![0; 64]);
}
