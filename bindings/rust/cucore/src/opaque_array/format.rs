//! What an array is: its formats, kinds and flags, the options of an array to create and the
//! description of one (`cucore_array_format_t`, `cucore_array_kind_t`, `cucore_array_flag_t`,
//! `cucore_opaque_array_options_t`, `cucore_opaque_array_info_t`). Part of
//! [`opaque_array`](super), which exports every name.

use std::fmt;
use std::ops::{BitOr, BitOrAssign};

use cucore_sys as sys;

// ---- Formats, kinds, flags --------------------------------------------------------------------------

macro_rules! array_formats {
    ($( $(#[$doc:meta])* $variant:ident = $raw:ident, $name:literal; )*) => {
        /// An array's element format (`cucore_array_format_t`; the driver's `CUarray_format`
        /// values). Plain formats take 1, 2 or 4 channels; the normalized, BC and 101010_2
        /// formats name their own count.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ArrayFormat {
            $( $(#[$doc])* $variant, )*
            /// A value this binding does not know (a newer library), or
            /// `CUCORE_ARRAY_FORMAT_UNSET`.
            Unknown(i32),
        }

        impl ArrayFormat {
            const ALL: &'static [ArrayFormat] = &[$( ArrayFormat::$variant, )*];

            /// The raw `cucore_array_format_t`.
            pub fn raw(self) -> sys::cucore_array_format_t {
                match self {
                    $( ArrayFormat::$variant => sys::$raw, )*
                    ArrayFormat::Unknown(raw) => raw,
                }
            }

            /// The format of a raw `cucore_array_format_t`.
            pub fn from_raw(raw: sys::cucore_array_format_t) -> ArrayFormat {
                match raw {
                    $( sys::$raw => ArrayFormat::$variant, )*
                    other => ArrayFormat::Unknown(other),
                }
            }

            /// The header's name less its prefix, lower case, e.g. `"float32"`, `"bc1_unorm"`
            /// (None for `Unknown`).
            pub fn name(self) -> Option<&'static str> {
                match self {
                    $( ArrayFormat::$variant => Some($name), )*
                    ArrayFormat::Unknown(_) => None,
                }
            }
        }
    };
}

array_formats! {
    /// 8-bit unsigned integers.
    Uint8 = CUCORE_ARRAY_FORMAT_UINT8, "uint8";
    /// 16-bit unsigned integers.
    Uint16 = CUCORE_ARRAY_FORMAT_UINT16, "uint16";
    /// 32-bit unsigned integers.
    Uint32 = CUCORE_ARRAY_FORMAT_UINT32, "uint32";
    /// 8-bit signed integers.
    Int8 = CUCORE_ARRAY_FORMAT_INT8, "int8";
    /// 16-bit signed integers.
    Int16 = CUCORE_ARRAY_FORMAT_INT16, "int16";
    /// 32-bit signed integers.
    Int32 = CUCORE_ARRAY_FORMAT_INT32, "int32";
    /// 16-bit floats (half).
    Float16 = CUCORE_ARRAY_FORMAT_FLOAT16, "float16";
    /// 32-bit floats.
    Float32 = CUCORE_ARRAY_FORMAT_FLOAT32, "float32";
    /// 4 channels, R10G10B10A2 packed in 4 bytes, read normalized.
    UnormInt101010_2 = CUCORE_ARRAY_FORMAT_UNORM_INT_101010_2, "unorm_int_101010_2";
    /// BC1, 4 channels, 8-byte blocks.
    Bc1Unorm = CUCORE_ARRAY_FORMAT_BC1_UNORM, "bc1_unorm";
    /// BC1 sRGB (sampled by texture objects with `srgb` only).
    Bc1UnormSrgb = CUCORE_ARRAY_FORMAT_BC1_UNORM_SRGB, "bc1_unorm_srgb";
    /// BC2, 4 channels, 16-byte blocks.
    Bc2Unorm = CUCORE_ARRAY_FORMAT_BC2_UNORM, "bc2_unorm";
    /// BC2 sRGB.
    Bc2UnormSrgb = CUCORE_ARRAY_FORMAT_BC2_UNORM_SRGB, "bc2_unorm_srgb";
    /// BC3, 4 channels, 16-byte blocks.
    Bc3Unorm = CUCORE_ARRAY_FORMAT_BC3_UNORM, "bc3_unorm";
    /// BC3 sRGB.
    Bc3UnormSrgb = CUCORE_ARRAY_FORMAT_BC3_UNORM_SRGB, "bc3_unorm_srgb";
    /// BC4, 1 channel, 8-byte blocks.
    Bc4Unorm = CUCORE_ARRAY_FORMAT_BC4_UNORM, "bc4_unorm";
    /// BC4 signed.
    Bc4Snorm = CUCORE_ARRAY_FORMAT_BC4_SNORM, "bc4_snorm";
    /// BC5, 2 channels, 16-byte blocks.
    Bc5Unorm = CUCORE_ARRAY_FORMAT_BC5_UNORM, "bc5_unorm";
    /// BC5 signed.
    Bc5Snorm = CUCORE_ARRAY_FORMAT_BC5_SNORM, "bc5_snorm";
    /// BC6H unsigned half floats, 3 channels, 16-byte blocks.
    Bc6hUf16 = CUCORE_ARRAY_FORMAT_BC6H_UF16, "bc6h_uf16";
    /// BC6H signed half floats.
    Bc6hSf16 = CUCORE_ARRAY_FORMAT_BC6H_SF16, "bc6h_sf16";
    /// BC7, 4 channels, 16-byte blocks.
    Bc7Unorm = CUCORE_ARRAY_FORMAT_BC7_UNORM, "bc7_unorm";
    /// BC7 sRGB.
    Bc7UnormSrgb = CUCORE_ARRAY_FORMAT_BC7_UNORM_SRGB, "bc7_unorm_srgb";
    /// Unsigned normalized 8-bit integers, 1 channel.
    UnormInt8x1 = CUCORE_ARRAY_FORMAT_UNORM_INT8X1, "unorm_int8x1";
    /// Unsigned normalized 8-bit integers, 2 channels.
    UnormInt8x2 = CUCORE_ARRAY_FORMAT_UNORM_INT8X2, "unorm_int8x2";
    /// Unsigned normalized 8-bit integers, 4 channels.
    UnormInt8x4 = CUCORE_ARRAY_FORMAT_UNORM_INT8X4, "unorm_int8x4";
    /// Unsigned normalized 16-bit integers, 1 channel.
    UnormInt16x1 = CUCORE_ARRAY_FORMAT_UNORM_INT16X1, "unorm_int16x1";
    /// Unsigned normalized 16-bit integers, 2 channels.
    UnormInt16x2 = CUCORE_ARRAY_FORMAT_UNORM_INT16X2, "unorm_int16x2";
    /// Unsigned normalized 16-bit integers, 4 channels.
    UnormInt16x4 = CUCORE_ARRAY_FORMAT_UNORM_INT16X4, "unorm_int16x4";
    /// Signed normalized 8-bit integers, 1 channel.
    SnormInt8x1 = CUCORE_ARRAY_FORMAT_SNORM_INT8X1, "snorm_int8x1";
    /// Signed normalized 8-bit integers, 2 channels.
    SnormInt8x2 = CUCORE_ARRAY_FORMAT_SNORM_INT8X2, "snorm_int8x2";
    /// Signed normalized 8-bit integers, 4 channels.
    SnormInt8x4 = CUCORE_ARRAY_FORMAT_SNORM_INT8X4, "snorm_int8x4";
    /// Signed normalized 16-bit integers, 1 channel.
    SnormInt16x1 = CUCORE_ARRAY_FORMAT_SNORM_INT16X1, "snorm_int16x1";
    /// Signed normalized 16-bit integers, 2 channels.
    SnormInt16x2 = CUCORE_ARRAY_FORMAT_SNORM_INT16X2, "snorm_int16x2";
    /// Signed normalized 16-bit integers, 4 channels.
    SnormInt16x4 = CUCORE_ARRAY_FORMAT_SNORM_INT16X4, "snorm_int16x4";
}

impl ArrayFormat {
    /// Every format of the header, in its order (not `Unknown`).
    pub fn all() -> &'static [ArrayFormat] {
        ArrayFormat::ALL
    }

    /// Whether this is a block-compressed format (BC1 to BC7): its data moves in 4x4 blocks.
    pub fn is_block_compressed(self) -> bool {
        (sys::CUCORE_ARRAY_FORMAT_BC1_UNORM..=sys::CUCORE_ARRAY_FORMAT_BC7_UNORM_SRGB).contains(&self.raw())
    }
}

impl fmt::Display for ArrayFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "unknown format {:#x}", self.raw()),
        }
    }
}

/// How an array's extents are read (`cucore_array_kind_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ArrayKind {
    /// A 1D (height 0), 2D (depth 0) or 3D array: the default.
    #[default]
    Plain,
    /// `layers` layers of 1D (height 0) or 2D arrays; depth 0.
    Layered,
    /// Six square 2D faces (width == height; depth and layers 0), in the driver's face order
    /// (+X, -X, +Y, -Y, +Z, -Z).
    Cubemap,
    /// `layers` cubemaps of six faces each (width == height; depth 0).
    LayeredCubemap,
    /// A value this binding does not know (a newer library).
    Unknown(i32),
}

impl ArrayKind {
    /// The raw `cucore_array_kind_t`.
    pub fn raw(self) -> sys::cucore_array_kind_t {
        match self {
            ArrayKind::Plain => sys::CUCORE_ARRAY_KIND_PLAIN,
            ArrayKind::Layered => sys::CUCORE_ARRAY_KIND_LAYERED,
            ArrayKind::Cubemap => sys::CUCORE_ARRAY_KIND_CUBEMAP,
            ArrayKind::LayeredCubemap => sys::CUCORE_ARRAY_KIND_LAYERED_CUBEMAP,
            ArrayKind::Unknown(raw) => raw,
        }
    }

    /// The kind of a raw `cucore_array_kind_t`.
    pub fn from_raw(raw: sys::cucore_array_kind_t) -> ArrayKind {
        match raw {
            sys::CUCORE_ARRAY_KIND_PLAIN => ArrayKind::Plain,
            sys::CUCORE_ARRAY_KIND_LAYERED => ArrayKind::Layered,
            sys::CUCORE_ARRAY_KIND_CUBEMAP => ArrayKind::Cubemap,
            sys::CUCORE_ARRAY_KIND_LAYERED_CUBEMAP => ArrayKind::LayeredCubemap,
            other => ArrayKind::Unknown(other),
        }
    }
}

/// What an array may be used for (`cucore_array_flag_t` bits). Combine them with `|`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ArrayFlags(u32);

impl ArrayFlags {
    /// No flag.
    pub const NONE: ArrayFlags = ArrayFlags(sys::CUCORE_ARRAY_FLAG_NONE as u32);
    /// May back a surface object (kernel-side loads and stores).
    pub const SURFACE_LOAD_STORE: ArrayFlags = ArrayFlags(sys::CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE as u32);
    /// May be read with texture gather (2D arrays only).
    pub const TEXTURE_GATHER: ArrayFlags = ArrayFlags(sys::CUCORE_ARRAY_FLAG_TEXTURE_GATHER as u32);
    /// A depth texture (the driver decides which formats and kinds it takes).
    pub const DEPTH_TEXTURE: ArrayFlags = ArrayFlags(sys::CUCORE_ARRAY_FLAG_DEPTH_TEXTURE as u32);
    /// A sparse array (`Status::NotSupported` where the device has none).
    pub const SPARSE: ArrayFlags = ArrayFlags(sys::CUCORE_ARRAY_FLAG_SPARSE as u32);

    const ALL: u32 = 1 | 2 | 4 | 8;

    /// The flags of raw bits; None when a bit is unknown.
    pub fn from_bits(bits: u32) -> Option<ArrayFlags> {
        if bits & !Self::ALL == 0 {
            Some(ArrayFlags(bits))
        } else {
            None
        }
    }

    /// The raw bits, as the C ABI takes them.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Whether every bit of `other` is set here.
    pub fn contains(self, other: ArrayFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for ArrayFlags {
    type Output = ArrayFlags;
    fn bitor(self, rhs: ArrayFlags) -> ArrayFlags {
        ArrayFlags(self.0 | rhs.0)
    }
}

impl BitOrAssign for ArrayFlags {
    fn bitor_assign(&mut self, rhs: ArrayFlags) {
        self.0 |= rhs.0
    }
}

// ---- Options and info --------------------------------------------------------------------------------

/// The description of an array to create (`cucore_opaque_array_options_t`; cuda.core's
/// `OpaqueArrayOptions`). The default is the C struct's default, whose format is unset: name
/// one with [`format`](OpaqueArrayOptions::format), or creating fails with
/// `Status::InvalidArgument`.
///
/// ```
/// # use cucore::{ArrayFlags, ArrayFormat, ArrayKind, OpaqueArrayOptions};
/// // 2D RGBA floats that kernels may also write through a surface object:
/// let o = OpaqueArrayOptions::default()
///     .format(ArrayFormat::Float32)
///     .num_channels(4)
///     .width(256)
///     .height(128)
///     .flags(ArrayFlags::SURFACE_LOAD_STORE);
/// assert_eq!(o.to_raw().width, 256);
/// // Six faces of 64 x 64 halves:
/// let cube = OpaqueArrayOptions::default().format(ArrayFormat::Float16).kind(ArrayKind::Cubemap).width(64).height(64);
/// # let _ = cube;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpaqueArrayOptions {
    /// The element format (required; None leaves it unset).
    pub format: Option<ArrayFormat>,
    /// Channels per element: 1, 2 or 4 (3 only for BC6H); 0: the count the format names
    /// (normalized, BC and 101010_2 formats), else 1.
    pub num_channels: u32,
    /// How the extents are read.
    pub kind: ArrayKind,
    /// What the array may be used for.
    pub flags: ArrayFlags,
    /// Elements per row, at least 1.
    pub width: u64,
    /// Rows; 0 for a 1D array (or 1D layers).
    pub height: u64,
    /// Slices; 0 unless the array is 3D.
    pub depth: u64,
    /// Layers ([`ArrayKind::Layered`]) or cubemaps ([`ArrayKind::LayeredCubemap`]); else 0.
    pub layers: u64,
}

impl OpaqueArrayOptions {
    setters! {
        /// Sets `format`.
        format: ArrayFormat => |format: ArrayFormat| Some(format);
        /// Sets `num_channels`.
        num_channels: u32 => |n: u32| n;
        /// Sets `kind`.
        kind: ArrayKind => |kind: ArrayKind| kind;
        /// Sets `flags`.
        flags: ArrayFlags => |flags: ArrayFlags| flags;
        /// Sets `width`.
        width: u64 => |w: u64| w;
        /// Sets `height`.
        height: u64 => |h: u64| h;
        /// Sets `depth`.
        depth: u64 => |d: u64| d;
        /// Sets `layers`.
        layers: u64 => |n: u64| n;
    }

    /// The C struct.
    pub fn to_raw(&self) -> sys::cucore_opaque_array_options_t {
        let mut o = sys::cucore_opaque_array_options_t::INIT;
        o.format = self.format.map_or(sys::CUCORE_ARRAY_FORMAT_UNSET, ArrayFormat::raw);
        o.num_channels = self.num_channels;
        o.kind = self.kind.raw();
        o.flags = self.flags.bits();
        o.width = self.width;
        o.height = self.height;
        o.depth = self.depth;
        o.layers = self.layers;
        o
    }
}

/// What an array (or a mipmapped array: its level 0) is (`cucore_opaque_array_info_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OpaqueArrayInfo {
    /// The element format.
    pub format: ArrayFormat,
    /// Channels per element.
    pub num_channels: u32,
    /// Bytes per element (format size x channels); for a BC format, bytes per 4x4 block.
    pub element_size: u32,
    /// How the extents are read.
    pub kind: ArrayKind,
    /// What the array may be used for.
    pub flags: ArrayFlags,
    /// Elements per row.
    pub width: u64,
    /// Rows; 0 for 1D.
    pub height: u64,
    /// Slices; 0 unless 3D.
    pub depth: u64,
    /// Layers (layered), cubemaps (layered cubemap), else 0.
    pub layers: u64,
    /// Bytes per packed row (BC: a row of blocks).
    pub row_bytes: u64,
    /// Packed rows per slice (BC: rows of blocks).
    pub row_count: u64,
    /// Slices: 3D depth, layers, 6 faces per cubemap; 1 otherwise.
    pub slice_count: u64,
    /// `row_bytes x row_count x slice_count`: what whole-array copies move.
    pub size_bytes: u64,
    /// The device's ordinal.
    pub device_ordinal: i32,
    /// Made by the library and destroyed once unused (false: a level of a mipmapped array, a
    /// wrapped foreign array or a mapped GL image).
    pub is_owned: bool,
    /// A mipmapped array's levels; 1 for an array.
    pub num_levels: u32,
}

impl OpaqueArrayInfo {
    /// The info of the C struct.
    pub fn from_raw(raw: &sys::cucore_opaque_array_info_t) -> OpaqueArrayInfo {
        OpaqueArrayInfo {
            format: ArrayFormat::from_raw(raw.format),
            num_channels: raw.num_channels,
            element_size: raw.element_size,
            kind: ArrayKind::from_raw(raw.kind),
            flags: ArrayFlags(raw.flags),
            width: raw.width,
            height: raw.height,
            depth: raw.depth,
            layers: raw.layers,
            row_bytes: raw.row_bytes,
            row_count: raw.row_count,
            slice_count: raw.slice_count,
            size_bytes: raw.size_bytes,
            device_ordinal: raw.device_ordinal,
            is_owned: raw.is_owned != 0,
            num_levels: raw.num_levels,
        }
    }

    /// Whether the array may back a surface object (cuda.core's `is_surface_load_store`).
    pub fn is_surface_load_store(&self) -> bool {
        self.flags.contains(ArrayFlags::SURFACE_LOAD_STORE)
    }
}
