//! A user memory resource over host memory (no GPU needed), shared by the tests of user-defined
//! resources (user_memory.rs) and of peer access (memory_pool.rs), and host-memory helpers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cucore::{Error, Result, Status, StreamRef, UserMemoryResource};

/// What the arena's callbacks saw.
#[derive(Default)]
pub struct Log {
    /// (size, stream given) per allocate call.
    pub allocated: Mutex<Vec<(u64, bool)>>,
    /// (address, size, stream given) per deallocate call.
    pub deallocated: Mutex<Vec<(u64, u64, bool)>>,
    /// How many times the arena was dropped.
    pub drops: AtomicUsize,
}

/// Host memory from one Vec<u8>, handed out first-fit in 64-byte aligned pieces.
pub struct Arena {
    storage: Vec<u8>,
    base: u64,
    pub live: Mutex<Vec<(u64, u64)>>, // (offset, size), sorted by offset
    log: Arc<Log>,
}

impl Arena {
    pub fn new(bytes: usize, log: Arc<Log>) -> Arena {
        let mut storage = vec![0u8; bytes + 64];
        // Align the base so that every piece is 64-byte aligned.
        let start = storage.as_mut_ptr() as u64;
        let base = (start + 63) & !63;
        Arena { storage, base, live: Mutex::new(Vec::new()), log }
    }

    fn capacity(&self) -> u64 {
        (self.storage.len() - 64) as u64
    }
}

impl UserMemoryResource for Arena {
    fn allocate(&self, size: u64, stream: Option<&StreamRef>) -> Result<u64> {
        self.log.allocated.lock().unwrap().push((size, stream.is_some()));
        let rounded = (size + 63) & !63;
        let mut live = self.live.lock().unwrap();
        let mut at = 0u64;
        let mut index = 0;
        for (i, (offset, len)) in live.iter().enumerate() {
            if at + rounded <= *offset {
                break;
            }
            at = offset + ((len + 63) & !63);
            index = i + 1;
        }
        if at + rounded > self.capacity() {
            return Err(Error::new(Status::OutOfMemory, format!("arena full: {} bytes wanted", size)));
        }
        live.insert(index, (at, size));
        Ok(self.base + at)
    }

    fn deallocate(&self, address: u64, size: u64, stream: Option<&StreamRef>) -> Result<()> {
        self.log.deallocated.lock().unwrap().push((address, size, stream.is_some()));
        let mut live = self.live.lock().unwrap();
        let offset = address - self.base;
        let i = live.iter().position(|p| *p == (offset, size)).expect("deallocate of something never allocated");
        live.remove(i);
        Ok(())
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        assert!(self.live.lock().unwrap().is_empty(), "the arena goes after its last buffer");
        self.log.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// Writes `bytes` into host memory at `address` (memory of the arena).
pub fn poke(address: u64, bytes: &[u8]) {
    // SAFETY: the tests only poke inside buffers of an arena that is alive.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), address as *mut u8, bytes.len()) }
}

pub fn peek(address: u64, len: usize) -> Vec<u8> {
    // SAFETY: as in poke.
    unsafe { std::slice::from_raw_parts(address as *const u8, len) }.to_vec()
}
