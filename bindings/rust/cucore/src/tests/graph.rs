//! Unit tests of the graph types that need no GPU and no driver: handle sizes, options and their C
//! values, conditions as kernel arguments, errors of released or garbage handles, and closures
//! dropped uncalled when a call fails.

use super::*;

#[test]
fn graph_handles_are_one_pointer() {
    assert_eq!(std::mem::size_of::<GraphDefinition>(), std::mem::size_of::<*mut c_void>());
    assert_eq!(std::mem::size_of::<Option<GraphNode>>(), std::mem::size_of::<*mut c_void>());
    assert_eq!(std::mem::size_of::<Graph>(), std::mem::size_of::<*mut c_void>());
    assert_eq!(std::mem::size_of::<GraphBuilder>(), std::mem::size_of::<*mut c_void>());
    assert_eq!(std::mem::size_of::<GraphMemoryResource>(), std::mem::size_of::<*mut c_void>());
}

#[test]
fn graph_options_to_raw() {
    let o = GraphCompleteOptions::default().to_raw();
    assert_eq!(o, sys::cucore_graph_complete_options_t::INIT, "the default sets nothing, as the C INIT");
    let mut junk = [0x31_u64; 8];
    let stream = unsafe { Stream::adopt(garbage(&mut junk)) };
    let o = GraphCompleteOptions::default()
        .auto_free_on_launch(true)
        .device_launch(true)
        .use_node_priority(true)
        .upload_stream(&stream)
        .to_raw();
    assert_eq!(
        o.flags,
        (sys::CUCORE_GRAPH_COMPLETE_AUTO_FREE_ON_LAUNCH
            | sys::CUCORE_GRAPH_COMPLETE_DEVICE_LAUNCH
            | sys::CUCORE_GRAPH_COMPLETE_USE_NODE_PRIORITY) as u32
    );
    assert_eq!(o.upload_stream, stream.as_raw());
    let _ = stream.into_raw();

    let a = GraphAllocOptions::default().to_raw().unwrap();
    assert_eq!(a.memory_type, sys::CUCORE_GRAPH_MEMORY_DEVICE);
    assert_eq!(a.peer_access_count, 0);
    assert_eq!(a.struct_size as usize, std::mem::size_of::<sys::cucore_graph_alloc_options_t>());
    let a = GraphAllocOptions::default().memory_type(GraphMemoryType::Host).peer_access(&[1, 3]).to_raw().unwrap();
    assert_eq!(a.memory_type, sys::CUCORE_GRAPH_MEMORY_HOST);
    assert_eq!((a.peer_access_count, a.peer_access[0], a.peer_access[1], a.peer_access[2]), (2, 1, 3, 0));
    let all: Vec<i32> = (0..MAX_GRAPH_ALLOC_PEERS as i32).collect();
    assert_eq!(GraphAllocOptions::default().peer_access(&all).to_raw().unwrap().peer_access_count, 8);
    let too_many: Vec<i32> = (0..=MAX_GRAPH_ALLOC_PEERS as i32).collect();
    let e = GraphAllocOptions::default().peer_access(&too_many).to_raw().unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("9 peers") && e.message.contains("at most 8"), "{}", e);

    assert_eq!(GraphDebugPrintOptions::default().flags(), 0);
    assert_eq!(GraphDebugPrintOptions::default().verbose(true).flags(), sys::CUCORE_GRAPH_DOT_VERBOSE as u32);
    let d = GraphDebugPrintOptions::default().handles(true).conditional_node_params(true).kernel_node_params(true);
    assert_eq!(
        d.flags(),
        (sys::CUCORE_GRAPH_DOT_HANDLES
            | sys::CUCORE_GRAPH_DOT_CONDITIONAL_NODE_PARAMS
            | sys::CUCORE_GRAPH_DOT_KERNEL_NODE_PARAMS) as u32
    );
    let every = GraphDebugPrintOptions {
        verbose: true,
        runtime_types: true,
        kernel_node_params: true,
        memcpy_node_params: true,
        memset_node_params: true,
        host_node_params: true,
        event_node_params: true,
        ext_semas_signal_node_params: true,
        ext_semas_wait_node_params: true,
        kernel_node_attributes: true,
        handles: true,
        mem_alloc_node_params: true,
        mem_free_node_params: true,
        batch_mem_op_node_params: true,
        extra_topo_info: true,
        conditional_node_params: true,
    };
    // Every flag of the header: bits 0 to 15.
    assert_eq!(every.flags(), 0xffff);
    assert_eq!(GraphDebugPrintOptions::default().runtime_types(true).flags(), sys::CUCORE_GRAPH_DOT_RUNTIME_TYPES as u32);
}

#[test]
fn graph_enums_are_the_header_values() {
    for raw in 0..=15 {
        let t = GraphNodeType::from_raw(raw);
        assert_eq!(t.raw(), raw);
        assert_eq!(matches!(t, GraphNodeType::Unknown(_)), raw == 0 || raw == 15, "{}", raw);
    }
    assert_eq!(GraphNodeType::from_raw(sys::CUCORE_GRAPH_NODE_KERNEL), GraphNodeType::Kernel);
    assert_eq!(GraphNodeType::Conditional.raw(), sys::CUCORE_GRAPH_NODE_CONDITIONAL);
    for raw in 0..=9 {
        let r = GraphUpdateResult::from_raw(raw);
        assert_eq!(r.raw(), raw);
        assert_eq!(matches!(r, GraphUpdateResult::Unknown(_)), raw == 9, "{}", raw);
    }
    assert_eq!(GraphUpdateResult::from_raw(2), GraphUpdateResult::TopologyChanged);
    assert_eq!(GraphConditionalType::If.raw(), sys::CUCORE_GRAPH_CONDITIONAL_IF);
    assert_eq!(GraphConditionalType::While.raw(), sys::CUCORE_GRAPH_CONDITIONAL_WHILE);
    assert_eq!(GraphConditionalType::Switch.raw(), sys::CUCORE_GRAPH_CONDITIONAL_SWITCH);
    assert_eq!(CaptureMode::default(), CaptureMode::Relaxed);
    assert_eq!(CaptureMode::Global.raw(), sys::CUCORE_CAPTURE_MODE_GLOBAL);
    assert_eq!(CaptureMode::ThreadLocal.raw(), sys::CUCORE_CAPTURE_MODE_THREAD_LOCAL);
    assert_eq!(CaptureMode::Relaxed.raw(), sys::CUCORE_CAPTURE_MODE_RELAXED);
    for raw in 0..=3 {
        assert_eq!(CaptureStatus::from_raw(raw).raw(), raw);
    }
    assert_eq!(CaptureStatus::from_raw(1), CaptureStatus::Active);
    assert_eq!(CaptureStatus::from_raw(3), CaptureStatus::Unknown(3));
    assert_eq!(MemoryResourceKind::from_raw(sys::CUCORE_MEMORY_RESOURCE_GRAPH), MemoryResourceKind::Graph);
    assert_eq!(MemoryResourceKind::Graph.raw(), 9);
    assert!(MemoryResourceKind::Graph.is_stream_ordered());
    assert_eq!(GraphMemoryAttribute::UsedCurrent.raw(), sys::CUCORE_GRAPH_MEMORY_USED_CURRENT);
    assert_eq!(GraphMemoryAttribute::ReservedHigh.raw(), sys::CUCORE_GRAPH_MEMORY_RESERVED_HIGH);
}

/// A condition is an 8-byte kernel argument: its handle.
#[test]
fn graph_condition_is_a_kernel_argument() {
    let c = GraphCondition::from_raw(0x0123_4567_89ab_cdef);
    assert_eq!(c.handle(), 0x0123_4567_89ab_cdef);
    let mut scratch = 0u64;
    let (p, n) = c.kernel_arg(&mut scratch).unwrap();
    assert_eq!(n, 8);
    // SAFETY: KernelArg's contract: `n` readable bytes at `p` while `c` lives.
    let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, n) };
    assert_eq!(bytes, 0x0123_4567_89ab_cdef_u64.to_ne_bytes());
    assert_eq!(std::mem::size_of::<GraphCondition>(), 8);
}

#[test]
fn launch_config_from_raw_round_trips() {
    for c in [
        LaunchConfig::default(),
        LaunchConfig::new((4, 2), (32, 4, 2)).shared_memory_bytes(1024),
        LaunchConfig::new(8, 128).cluster(2).cooperative(true).programmatic_stream_serialization(true).priority(-1),
    ] {
        assert_eq!(LaunchConfig::from_raw(&c.to_raw()), c);
    }
}

#[test]
fn graph_update_error_converts_into_error() {
    let e = GraphUpdateError {
        error: Error::new(Status::InvalidState, "cucore_graph_update: refused (topology changed)"),
        result: GraphUpdateResult::TopologyChanged,
    };
    assert!(e.to_string().contains("TopologyChanged"), "{}", e);
    assert!(e.to_string().starts_with("CUCORE_ERROR_INVALID_STATE"), "{}", e);
    let boxed: Box<dyn std::error::Error> = Box::new(e.clone());
    assert!(boxed.source().is_some());
    fn through_question_mark(e: GraphUpdateError) -> Result<()> {
        Err(e)?;
        Ok(())
    }
    assert_eq!(through_question_mark(e).unwrap_err().status, Status::InvalidState);
}

/// Garbage graph handles give InvalidHandle, never a crash (also when dropped); closures handed
/// to a failing call are dropped without running.
#[test]
fn garbage_graph_handles_fail_cleanly() {
    let mut junk = [0x6e6e_6e6e_6e6e_6e6e_u64; 8];
    let mut junk_stream = [0x3e3e_3e3e_3e3e_3e3e_u64; 8];
    let stream = unsafe { Stream::adopt(garbage(&mut junk_stream)) };
    let invalid = |r: Result<()>| assert_eq!(r.unwrap_err().status, Status::InvalidHandle);
    let ran = tracker();
    let counting = |ran: &Arc<AtomicUsize>| {
        let captured = ran.clone();
        move || {
            captured.fetch_add(1, Ordering::SeqCst);
        }
    };

    let def = unsafe { GraphDefinition::adopt(garbage(&mut junk)) };
    assert_eq!(def.handle().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(def.is_owned().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(def.device().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(def.nodes().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(def.edges().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(def.clone_definition().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(def.instantiate(&GraphCompleteOptions::default()).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(def.create_condition(Some(1)).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(def.add_empty(&[]).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(def.add_free(&[], 0x1000).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(def.add_alloc(&[], 64, &GraphAllocOptions::default()).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(
        def.add_conditional(&[], GraphCondition::from_raw(1), GraphConditionalType::If, 2).unwrap_err().status,
        Status::InvalidHandle
    );
    assert_eq!(def.add_host_callback(&[], counting(&ran)).unwrap_err().status, Status::InvalidHandle);
    invalid(def.debug_dot_print("/tmp/never-written.dot", &GraphDebugPrintOptions::default()));
    assert!(format!("{:?}", def).starts_with("GraphDefinition("));

    let node = unsafe { GraphNode::adopt(garbage(&mut junk)) };
    assert_eq!(node.handle().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(node.node_type().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(node.definition().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(node.dependencies().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(node.dependents().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(node.bodies().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(node.alloc_info().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(node.kernel_config().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(node.find_in_clone(&def).unwrap_err().status, Status::InvalidHandle);
    invalid(node.destroy());
    invalid(node.add_dependent(&node));
    invalid(node.remove_dependent(&node));
    invalid(node.set_host_callback(counting(&ran)));
    assert!(format!("{:?}", node).starts_with("GraphNode("));
    // Equal to itself by handle, though the library knows no such node.
    assert!(node == node);

    let graph = unsafe { Graph::adopt(garbage(&mut junk)) };
    assert_eq!(graph.handle().unwrap_err().status, Status::InvalidHandle);
    invalid(graph.launch(&stream));
    invalid(graph.upload(&stream));
    let e = graph.update(&def).unwrap_err();
    assert_eq!(e.error.status, Status::InvalidHandle);
    invalid(graph.set_node_enabled(&node, false));
    assert_eq!(graph.node_enabled(&node).unwrap_err().status, Status::InvalidHandle);
    invalid(graph.set_host_callback_node(&node, counting(&ran)));
    assert!(format!("{:?}", graph).starts_with("Graph("));

    let builder = unsafe { GraphBuilder::adopt(garbage(&mut junk)) };
    invalid(builder.begin_building(CaptureMode::Global));
    invalid(builder.end_building());
    assert_eq!(builder.is_building().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(builder.stream().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(builder.definition().unwrap_err().status, Status::InvalidHandle);
    assert_eq!(builder.complete(&GraphCompleteOptions::default()).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(builder.split(2).unwrap_err().status, Status::InvalidHandle);
    let e = builder.join(&[&builder]).unwrap_err();
    assert!(matches!(e.status, Status::InvalidHandle | Status::InvalidArgument), "{}", e);
    assert_eq!(builder.create_condition(None).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(builder.while_loop(GraphCondition::from_raw(1)).unwrap_err().status, Status::InvalidHandle);
    invalid(builder.embed(&builder));
    invalid(builder.callback(counting(&ran)));
    assert!(format!("{:?}", builder).starts_with("GraphBuilder("));

    assert_eq!(GraphBuilder::create(&stream).unwrap_err().status, Status::InvalidHandle);
    assert_eq!(stream.capture_status().unwrap_err().status, Status::InvalidHandle);

    drop((def, node, graph, builder));
    let _ = stream.into_raw();
    assert_eq!(ran.load(Ordering::SeqCst), 0, "no closure of a failed call ran");
    assert_eq!(Arc::strong_count(&ran), 1, "every closure of a failed call was dropped");
}

#[test]
#[should_panic(expected = "cucore_graph_definition_retain failed")]
fn clone_of_a_garbage_definition_panics() {
    let mut junk = [0x57_u64; 8];
    let def = unsafe { GraphDefinition::adopt(garbage(&mut junk)) };
    let _ = def.clone();
}

/// A 3D copy node with a host side is refused before any call: the graph would use the slice
/// after the borrow ends.
#[test]
fn memcpy_3d_node_with_a_host_side_is_refused() {
    let mut junk = [0x58_u64; 8];
    let mut junk_buffer = [0x59_u64; 8];
    let def = unsafe { GraphDefinition::adopt(garbage(&mut junk)) };
    let buffer = unsafe { Buffer::adopt(garbage(&mut junk_buffer)) };
    let src = [1u8; 64];
    let e = def
        .add_memcpy_3d(&[], MemoryRegion::buffer(&buffer, 16), MemoryRegion::host(&src, 16), Extent3D::new_2d(16, 4))
        .unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    assert!(e.message.contains("add_memcpy_3d_host"), "{}", e);
    let mut dst = [0u8; 64];
    let e = def
        .add_memcpy_3d(&[], MemoryRegion::host_mut(&mut dst, 16), MemoryRegion::buffer(&buffer, 16), Extent3D::new_2d(16, 4))
        .unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument, "{}", e);
    // Between buffers the call is made (and the garbage handles refused).
    let e = def
        .add_memcpy_3d(&[], MemoryRegion::buffer(&buffer, 16), MemoryRegion::buffer(&buffer, 16), Extent3D::new_2d(16, 4))
        .unwrap_err();
    assert_eq!(e.status, Status::InvalidHandle, "{}", e);
    let _ = (def.into_raw(), buffer.into_raw());
}
