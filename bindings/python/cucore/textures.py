"""The seed's spelling of the array API (`cuda.core.textures.CUDAArray` in the first cuda.core documents):
the same classes as `cucore.texture`, under the names that document used, not copies of them: `CUDAArray` is
`OpaqueArray`, `ArrayFormat` is `cucore.typing.ArrayFormatType` (everything else is in `cucore.texture`).

    from cucore.textures import ArrayFormat, CUDAArray
    arr = CUDAArray.from_descriptor(shape=(64, 64), format=ArrayFormat.FLOAT32, num_channels=1,
                                    is_surface_load_store=True)
    arr.copy_from(src, stream=s)
    dst = arr.copy_to(dst, stream=s)
    assert isinstance(arr, cucore.texture.OpaqueArray) and arr.element_size == arr.element_bytes
"""
from __future__ import annotations

from .texture import OpaqueArray
from .typing import ArrayFormatType

CUDAArray = OpaqueArray      # the seed's name of OpaqueArray (the same class)
ArrayFormat = ArrayFormatType  # the seed's name of the formats (the same enum)

__all__ = ["ArrayFormat", "CUDAArray"]
