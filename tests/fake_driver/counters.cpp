// What the fake holds now, for the tests' leak checks.
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
    for (const detail::Array *a : g.arrays) c.arrays += a->created && !a->destroyed ? 1 : 0;
    for (const detail::MipmappedArray *m : g.mipmapped_arrays) c.mipmapped_arrays += !m->graphics && !m->destroyed ? 1 : 0;
    for (auto &[handle, t] : g.textures) c.texture_objects += t.destroyed ? 0 : 1;
    for (auto &[handle, s] : g.surfaces) c.surface_objects += s.destroyed ? 0 : 1;
    return c;
}

}  // namespace fake
