"""cucore.utils: the utilities of cuda.core.utils that libcucore has, under their names: the batched copies
(copy_batch with CopyOptions, MemcpySrcAccessOrder, MemcpyOverlapMode; and copy_3d_batch, libcucore's) and the batched prefetches and
discards of managed buffers (prefetch_batch, discard_batch, discard_prefetch_batch). They are implemented in
cucore.memory_operations (include/cucore/memory_operations.h)."""
from .memory_operations import (
    CopyOptions, MemcpyOverlapMode, MemcpySrcAccessOrder, copy_3d_batch, copy_batch, discard_batch,
    discard_prefetch_batch, prefetch_batch,
)

__all__ = ["CopyOptions", "MemcpyOverlapMode", "MemcpySrcAccessOrder", "copy_3d_batch", "copy_batch", "discard_batch",
           "discard_prefetch_batch", "prefetch_batch"]
