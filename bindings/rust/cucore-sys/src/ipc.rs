//! The types and constants of `include/cucore/ipc.h` (sharing memory pools, buffers and events
//! between processes; Linux). The functions are declared in `lib.rs`, where the binding check
//! reads them. The layout is checked by the tests below against gcc's offsets.

/// `CUCORE_IPC_POOL_ID_SIZE`: the bytes of an exported pool's identifier.
pub const CUCORE_IPC_POOL_ID_SIZE: usize = 16;
/// `CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE`: the bytes of a buffer descriptor.
pub const CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE: usize = 128;
/// `CUCORE_IPC_EVENT_DESCRIPTOR_SIZE`: the bytes of an event descriptor.
pub const CUCORE_IPC_EVENT_DESCRIPTOR_SIZE: usize = 72;

/// `cucore_ipc_pool_handle_t`: an exported pool, a file descriptor (owned by whoever holds the
/// struct), the pool's kind (`CUCORE_MEMORY_RESOURCE_DEVICE` or `_PINNED`) and its identifier.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct cucore_ipc_pool_handle_t {
    pub fd: i32,
    pub kind: u32,
    pub pool_id: [u8; CUCORE_IPC_POOL_ID_SIZE],
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of, MaybeUninit};
    use std::ptr;

    #[test]
    fn layout_ipc_pool_handle() {
        assert_eq!(size_of::<cucore_ipc_pool_handle_t>(), 24);
        assert_eq!(align_of::<cucore_ipc_pool_handle_t>(), 4);
        let u = MaybeUninit::<cucore_ipc_pool_handle_t>::uninit();
        let base = u.as_ptr();
        // SAFETY: addresses inside the allocation only; nothing is read.
        let (kind, id) = unsafe { (ptr::addr_of!((*base).kind) as usize, ptr::addr_of!((*base).pool_id) as usize) };
        assert_eq!(kind - base as usize, 4);
        assert_eq!(id - base as usize, 8);
    }
}
