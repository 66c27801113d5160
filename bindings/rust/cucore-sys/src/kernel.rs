//! The declarations of `include/cucore/kernel.h`: kernels (attributes, parameters, occupancy).

use std::os::raw::{c_char, c_int, c_void};

use crate::{cucore_device_t, cucore_kernel_t, cucore_release_fn, cucore_status_t};

/// `cucore_kernel_attribute_t` (a 32-bit C enum): the driver's `CU_FUNC_ATTRIBUTE_*` plus one.
pub type cucore_kernel_attribute_t = c_int;
pub const CUCORE_KERNEL_ATTRIBUTE_UNSET: cucore_kernel_attribute_t = 0;
pub const CUCORE_KERNEL_ATTRIBUTE_MAX_THREADS_PER_BLOCK: cucore_kernel_attribute_t = 1;
pub const CUCORE_KERNEL_ATTRIBUTE_SHARED_SIZE_BYTES: cucore_kernel_attribute_t = 2;
pub const CUCORE_KERNEL_ATTRIBUTE_CONST_SIZE_BYTES: cucore_kernel_attribute_t = 3;
pub const CUCORE_KERNEL_ATTRIBUTE_LOCAL_SIZE_BYTES: cucore_kernel_attribute_t = 4;
pub const CUCORE_KERNEL_ATTRIBUTE_NUM_REGS: cucore_kernel_attribute_t = 5;
pub const CUCORE_KERNEL_ATTRIBUTE_PTX_VERSION: cucore_kernel_attribute_t = 6;
pub const CUCORE_KERNEL_ATTRIBUTE_BINARY_VERSION: cucore_kernel_attribute_t = 7;
pub const CUCORE_KERNEL_ATTRIBUTE_CACHE_MODE_CA: cucore_kernel_attribute_t = 8;
/// Settable.
pub const CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: cucore_kernel_attribute_t = 9;
/// Settable: percent of L1, or -1.
pub const CUCORE_KERNEL_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: cucore_kernel_attribute_t = 10;
pub const CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: cucore_kernel_attribute_t = 11;
/// Settable.
pub const CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: cucore_kernel_attribute_t = 12;
/// Settable.
pub const CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: cucore_kernel_attribute_t = 13;
/// Settable.
pub const CUCORE_KERNEL_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: cucore_kernel_attribute_t = 14;
/// Settable.
pub const CUCORE_KERNEL_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: cucore_kernel_attribute_t = 15;
/// Settable.
pub const CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: cucore_kernel_attribute_t = 16;
/// One past the last.
pub const CUCORE_KERNEL_ATTRIBUTE_COUNT: cucore_kernel_attribute_t = 17;
pub const CUCORE_KERNEL_ATTRIBUTE_FORCE_INT32: cucore_kernel_attribute_t = 0x7fff_ffff;

extern "C" {
    pub fn cucore_kernel_from_handle(
        cu_kernel: *mut c_void,
        on_release: cucore_release_fn,
        user_data: *mut c_void,
        kernel: *mut *mut cucore_kernel_t,
    ) -> cucore_status_t;
    pub fn cucore_kernel_from_function(
        cu_function: *mut c_void,
        on_release: cucore_release_fn,
        user_data: *mut c_void,
        kernel: *mut *mut cucore_kernel_t,
    ) -> cucore_status_t;
    pub fn cucore_kernel_retain(kernel: *mut cucore_kernel_t) -> cucore_status_t;
    pub fn cucore_kernel_release(kernel: *mut cucore_kernel_t) -> cucore_status_t;
    pub fn cucore_kernel_name(kernel: *const cucore_kernel_t, name: *mut *const c_char) -> cucore_status_t;
    pub fn cucore_kernel_attribute(
        kernel: *mut cucore_kernel_t,
        device: *mut cucore_device_t,
        attribute: cucore_kernel_attribute_t,
        value: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_kernel_set_attribute(
        kernel: *mut cucore_kernel_t,
        device: *mut cucore_device_t,
        attribute: cucore_kernel_attribute_t,
        value: c_int,
    ) -> cucore_status_t;
    pub fn cucore_kernel_param_count(kernel: *mut cucore_kernel_t, count: *mut usize) -> cucore_status_t;
    pub fn cucore_kernel_param_info(
        kernel: *mut cucore_kernel_t,
        index: usize,
        offset: *mut usize,
        size: *mut usize,
    ) -> cucore_status_t;
    pub fn cucore_kernel_max_active_blocks_per_multiprocessor(
        kernel: *mut cucore_kernel_t,
        device: *mut cucore_device_t,
        block_size: u32,
        dynamic_shared_bytes: usize,
        blocks: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_kernel_max_potential_block_size(
        kernel: *mut cucore_kernel_t,
        device: *mut cucore_device_t,
        dynamic_shared_bytes: usize,
        block_size_limit: u32,
        min_grid_size: *mut c_int,
        block_size: *mut c_int,
    ) -> cucore_status_t;
    pub fn cucore_kernel_available_dynamic_shared_memory(
        kernel: *mut cucore_kernel_t,
        device: *mut cucore_device_t,
        num_blocks: u32,
        block_size: u32,
        bytes: *mut usize,
    ) -> cucore_status_t;
    pub fn cucore_kernel_handle(kernel: *const cucore_kernel_t, cu_kernel: *mut *mut c_void) -> cucore_status_t;
    pub fn cucore_kernel_function(
        kernel: *mut cucore_kernel_t,
        device: *mut cucore_device_t,
        cu_function: *mut *mut c_void,
    ) -> cucore_status_t;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_attributes_are_the_driver_values_plus_one() {
        assert_eq!(std::mem::size_of::<cucore_kernel_attribute_t>(), 4);
        // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15.
        assert_eq!(CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8 + 1);
        assert_eq!(CUCORE_KERNEL_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 15 + 1);
        assert_eq!(CUCORE_KERNEL_ATTRIBUTE_COUNT, 17);
    }
}
