//! The declarations of `include/cucore/launch.h`: launch configurations and kernel launches.
//! The layout of the configuration struct is checked by the tests below against gcc's offsets.

use std::os::raw::{c_int, c_void};

use crate::{cucore_device_t, cucore_kernel_t, cucore_status_t, cucore_stream_t};

/// `cucore_launch_flag_t` (a 32-bit C enum; bits of `cucore_launch_config_t::flags`).
pub type cucore_launch_flag_t = c_int;
pub const CUCORE_LAUNCH_DEFAULT: cucore_launch_flag_t = 0;
/// A cooperative launch (grid-wide synchronisation; the whole grid must be resident).
pub const CUCORE_LAUNCH_COOPERATIVE: cucore_launch_flag_t = 1;
/// Programmatic stream serialisation (programmatic dependent launch).
pub const CUCORE_LAUNCH_PROGRAMMATIC_STREAM_SERIALIZATION: cucore_launch_flag_t = 2;
/// The launch's priority is `priority`, not the stream's.
pub const CUCORE_LAUNCH_PRIORITY: cucore_launch_flag_t = 4;
pub const CUCORE_LAUNCH_FLAG_FORCE_INT32: cucore_launch_flag_t = 0x7fff_ffff;

/// `cucore_launch_config_t`. A zero dimension counts as 1; with a cluster, `grid` counts
/// clusters.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct cucore_launch_config_t {
    pub struct_size: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub cluster: [u32; 3],
    pub shared_memory_bytes: u32,
    pub flags: u32,
    pub priority: i32,
}

impl cucore_launch_config_t {
    /// `CUCORE_LAUNCH_CONFIG_INIT`: one thread, no cluster.
    pub const INIT: cucore_launch_config_t = cucore_launch_config_t {
        struct_size: std::mem::size_of::<cucore_launch_config_t>() as u32,
        grid: [1, 1, 1],
        block: [1, 1, 1],
        cluster: [0, 0, 0],
        shared_memory_bytes: 0,
        flags: 0,
        priority: 0,
    };
}

impl Default for cucore_launch_config_t {
    fn default() -> Self {
        Self::INIT
    }
}

extern "C" {
    pub fn cucore_launch_config_validate(
        config: *const cucore_launch_config_t,
        kernel: *mut cucore_kernel_t,
        device: *mut cucore_device_t,
    ) -> cucore_status_t;
    pub fn cucore_launch(
        stream: *mut cucore_stream_t,
        config: *const cucore_launch_config_t,
        kernel: *mut cucore_kernel_t,
        args: *const *const c_void,
        arg_sizes: *const usize,
        arg_count: usize,
    ) -> cucore_status_t;
    pub fn cucore_launch_max_potential_cluster_size(
        config: *const cucore_launch_config_t,
        kernel: *mut cucore_kernel_t,
        device: *mut cucore_device_t,
        cluster_size: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_launch_max_active_clusters(
        config: *const cucore_launch_config_t,
        kernel: *mut cucore_kernel_t,
        device: *mut cucore_device_t,
        clusters: *mut c_int,
    ) -> cucore_status_t;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of};



    // Offsets as gcc lays out include/cucore/launch.h.
    #[test]
    fn layout_launch_config() {
        assert_eq!(size_of::<cucore_launch_config_t>(), 52);
        assert_eq!(align_of::<cucore_launch_config_t>(), 4);
        assert_eq!(offset!(cucore_launch_config_t, grid), 4);
        assert_eq!(offset!(cucore_launch_config_t, block), 16);
        assert_eq!(offset!(cucore_launch_config_t, cluster), 28);
        assert_eq!(offset!(cucore_launch_config_t, shared_memory_bytes), 40);
        assert_eq!(offset!(cucore_launch_config_t, flags), 44);
        assert_eq!(offset!(cucore_launch_config_t, priority), 48);
        assert_eq!(cucore_launch_config_t::INIT.struct_size, 52);
        assert_eq!(size_of::<cucore_launch_flag_t>(), 4);
    }
}
