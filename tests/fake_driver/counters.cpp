// What the fake holds now, for the tests' leak checks.
#include "graphs.hpp"
#include "state.hpp"

namespace fake {

Counters counters() {
    detail::Lock lock(detail::state().mutex);
    const detail::State &g = detail::state();
    Counters c;
    for (int refs : g.primary_refs) c.primary_retained += refs;
    c.streams = static_cast<int>(g.streams.size());
    c.events = static_cast<int>(g.events.size());
    c.pools = static_cast<int>(g.pools.size());
    for (auto &[base, a] : g.allocations) {
        const bool counted = a.kind == detail::MemoryKind::device || a.kind == detail::MemoryKind::pinned ||
                             a.kind == detail::MemoryKind::managed;
        c.allocations += counted && a.state == detail::AllocationState::live;
    }
    for (auto &[handle, physical] : g.physical) c.vmm_handles += physical.released ? 0 : 1;
    c.reservations = static_cast<int>(g.reservations.size());
    c.mappings = static_cast<int>(g.mappings.size());
    c.imported_pointers = static_cast<int>(g.imported_pointers.size());
    c.libraries = static_cast<int>(g.libraries.size());
    c.link_states = static_cast<int>(g.links.size());
    c.graphics_resources = static_cast<int>(g.graphics.size());
    for (detail::GraphicsResource *graphics : g.graphics) c.graphics_mapped += graphics->mapped ? 1 : 0;
    c.arrays = g.live_arrays;
    c.mipmapped_arrays = g.live_mipmapped_arrays;
    c.texture_objects = static_cast<int>(g.live_textures.size());
    c.surface_objects = static_cast<int>(g.live_surfaces.size());
    for (detail::Graph *graph : detail::graphs().graphs) c.graphs += graph->top_level ? 1 : 0;
    c.graph_execs = static_cast<int>(detail::graphs().execs.size());
    c.user_objects = static_cast<int>(detail::graphs().user_objects.size());
    return c;
}

}  // namespace fake
