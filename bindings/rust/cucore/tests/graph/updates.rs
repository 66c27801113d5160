//! Node updates that replace what a node uses (part of graph/scenarios.rs, whose helpers they
//! use): the event of event record and wait nodes and the graph of child graph nodes, in a
//! definition (`GraphNode::set_event`, `set_child_graph`) and in an executable graph
//! (`Graph::set_event_node`, `set_child_graph_node`), on both drivers.

use super::*;

/// Whether `e` (a timing event) was recorded: one never recorded has no elapsed time.
fn recorded(e: &Event) -> bool {
    Event::elapsed_time(e, e).is_ok()
}

/// A definition filling `buf` (16 bytes) with `value`, then its first half with `value + 1`.
fn two_fills(dev: &Device, buf: &Buffer, value: u32) -> GraphDefinition {
    let def = GraphDefinition::create(dev).unwrap();
    let fill = def.add_memset(&[], &MemsetParams::new(buf, value, 1, 16)).unwrap();
    def.add_memset(&[&fill], &MemsetParams::new(buf, value + 1, 1, 8)).unwrap();
    def
}

fn halves(first: u8, second: u8) -> Vec<u8> {
    let mut v = vec![second; 16];
    v[..8].fill(first);
    v
}

/// An event record node records the event it was given last: in the definition for later
/// instantiations, in a graph for its later launches; other kinds of node are refused.
pub fn event_nodes_take_a_new_event(_test: &str, dev: &Device, _env: Env) {
    let s = stream(dev);
    let [a, b, c] = [0; 3].map(|_| dev.create_event(EventOptions::timing()).unwrap());
    let def = GraphDefinition::create(dev).unwrap();
    let record = def.add_event_record(&[], &a).unwrap();
    let wait = def.add_event_wait(&[&record], &a).unwrap();
    let empty = def.add_empty(&[&wait]).unwrap();

    record.set_event(&b).unwrap();
    wait.set_event(&b).unwrap();
    assert_eq!(empty.set_event(&b).unwrap_err().status, Status::InvalidArgument);
    let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
    graph.launch(&s).unwrap();
    s.synchronize().unwrap();
    assert!(recorded(&b), "the launch recorded the node's new event");
    assert!(!recorded(&a), "and not the one it replaced");

    graph.set_event_node(&record, &c).unwrap();
    graph.set_event_node(&wait, &c).unwrap();
    assert_eq!(graph.set_event_node(&empty, &c).unwrap_err().status, Status::InvalidArgument);
    graph.launch(&s).unwrap();
    s.synchronize().unwrap();
    assert!(recorded(&c), "the updated graph recorded its new event");
}

/// A child graph node of a definition takes a copy of another graph (of any topology); one of an
/// executable graph takes the parameters of a graph of its topology, and refuses another.
pub fn child_graph_nodes_take_a_new_graph(_test: &str, dev: &Device, _env: Env) {
    let s = stream(dev);
    let buf = buffer_of(dev, &s, 16, 0);
    let one = GraphDefinition::create(dev).unwrap();
    one.add_memset(&[], &MemsetParams::new(&buf, 0x11, 1, 16)).unwrap();
    let def = GraphDefinition::create(dev).unwrap();
    let child = def.add_child_graph(&[], &one).unwrap();
    let empty = def.add_empty(&[&child]).unwrap();

    let old = child.bodies().unwrap().remove(0);
    child.set_child_graph(&two_fills(dev, &buf, 0x22)).unwrap();
    assert_eq!(child.bodies().unwrap()[0].nodes().unwrap().len(), 2);
    assert_eq!(old.nodes().unwrap_err().status, Status::InvalidState, "the replaced graph went with the update");
    assert_eq!(child.set_child_graph(&def).unwrap_err().status, Status::InvalidArgument, "its own hierarchy");
    assert_eq!(empty.set_child_graph(&one).unwrap_err().status, Status::InvalidArgument);
    let graph = def.instantiate(&GraphCompleteOptions::default()).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&buf, &s), halves(0x23, 0x22));

    graph.set_child_graph_node(&child, &two_fills(dev, &buf, 0x44)).unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&buf, &s), halves(0x45, 0x44));
    assert!(graph.set_child_graph_node(&child, &one).is_err(), "another topology is refused");
    assert_eq!(graph.set_child_graph_node(&empty, &one).unwrap_err().status, Status::InvalidArgument);
    graph.launch(&s).unwrap();
    assert_eq!(bytes(&buf, &s), halves(0x45, 0x44), "a refused update changes nothing");
}
