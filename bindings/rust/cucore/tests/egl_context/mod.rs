//! A headless OpenGL context on a given CUDA device, for the Rust GL tests (graphics_gl.rs).
//!
//! The Rust twin of tests/gl/egl_context.{hpp,cpp} and tests/python/egl_context.py, made the way
//! docs/testing.md ("GL tests") describes: libEGL.so.1 is
//! dlopened (nothing links EGL or GL; `dlopen`/`dlsym` are declared here, no crate needed), the
//! EGL device whose `EGL_CUDA_DEVICE_NV` equals the CUDA ordinal is picked (EGL's order is not
//! CUDA's), a display on it is initialised, and a desktop OpenGL context is made current with a
//! small pbuffer (or with no surface where the display has only EGL_KHR_surfaceless_context). GL
//! entry points come from eglGetProcAddress.
//!
//! Where this cannot work (no libEGL.so.1, Mesa only, no NVIDIA EGL vendor for the glvnd loader,
//! no EGL device of that CUDA ordinal) [`EglContext::create`] returns the reason, for a skip.
//! A GL context is current on one thread at a time: each test makes its own.
#![allow(dead_code)]

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::sync::Mutex;

// ---- GL types and constants (values from the Khronos registry) ---------------------------------------

pub type GLenum = c_uint;
pub type GLuint = c_uint;
pub type GLint = c_int;
pub type GLsizei = c_int;
pub type GLintptr = isize;
pub type GLsizeiptr = isize;

pub const GL_NO_ERROR: GLenum = 0;
pub const GL_VENDOR: GLenum = 0x1F00;
pub const GL_RENDERER: GLenum = 0x1F01;
pub const GL_VERSION: GLenum = 0x1F02;
pub const GL_ARRAY_BUFFER: GLenum = 0x8892;
pub const GL_DYNAMIC_DRAW: GLenum = 0x88E8;
pub const GL_TEXTURE_2D: GLenum = 0x0DE1;
pub const GL_RGBA: GLenum = 0x1908;
pub const GL_RGBA8: GLenum = 0x8058;
pub const GL_UNSIGNED_BYTE: GLenum = 0x1401;
pub const GL_TEXTURE_MIN_FILTER: GLenum = 0x2801;
pub const GL_TEXTURE_MAG_FILTER: GLenum = 0x2800;
pub const GL_TEXTURE_MAX_LEVEL: GLenum = 0x813D;
pub const GL_NEAREST: GLenum = 0x2600;
pub const GL_PACK_ALIGNMENT: GLenum = 0x0D05;
pub const GL_UNPACK_ALIGNMENT: GLenum = 0x0CF5;

// ---- EGL types and constants ----------------------------------------------------------------------------

type EGLBoolean = c_uint;
type EGLint = i32;
type EGLenum = c_uint;
type EGLAttrib = isize;
type EGLDisplay = *mut c_void;
type EGLConfig = *mut c_void;
type EGLContext = *mut c_void;
type EGLSurface = *mut c_void;
type EGLDeviceEXT = *mut c_void;

const EGL_SUCCESS: EGLint = 0x3000;
const EGL_NONE: EGLint = 0x3038;
const EGL_VENDOR: EGLint = 0x3053;
const EGL_EXTENSIONS: EGLint = 0x3055;
const EGL_SURFACE_TYPE: EGLint = 0x3033;
const EGL_PBUFFER_BIT: EGLint = 0x0001;
const EGL_RENDERABLE_TYPE: EGLint = 0x3040;
const EGL_OPENGL_BIT: EGLint = 0x0008;
const EGL_RED_SIZE: EGLint = 0x3024;
const EGL_GREEN_SIZE: EGLint = 0x3023;
const EGL_BLUE_SIZE: EGLint = 0x3022;
const EGL_ALPHA_SIZE: EGLint = 0x3021;
const EGL_WIDTH: EGLint = 0x3057;
const EGL_HEIGHT: EGLint = 0x3056;
const EGL_OPENGL_API: EGLenum = 0x30A2;
const EGL_PLATFORM_DEVICE_EXT: EGLenum = 0x313F;
const EGL_CUDA_DEVICE_NV: EGLint = 0x323A;
const EGL_DRM_DEVICE_FILE_EXT: EGLint = 0x3233;
const EGL_TRUE: EGLBoolean = 1;

const EGL_ERRORS: [&str; 15] = [
    "EGL_SUCCESS",
    "EGL_NOT_INITIALIZED",
    "EGL_BAD_ACCESS",
    "EGL_BAD_ALLOC",
    "EGL_BAD_ATTRIBUTE",
    "EGL_BAD_CONFIG",
    "EGL_BAD_CONTEXT",
    "EGL_BAD_CURRENT_SURFACE",
    "EGL_BAD_DISPLAY",
    "EGL_BAD_MATCH",
    "EGL_BAD_NATIVE_PIXMAP",
    "EGL_BAD_NATIVE_WINDOW",
    "EGL_BAD_PARAMETER",
    "EGL_BAD_SURFACE",
    "EGL_CONTEXT_LOST",
];

/// Where NVIDIA's driver keeps its EGL vendor file (the first: a driver mounted into a container).
const NVIDIA_VENDOR_FILES: [&str; 4] = [
    "/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json",
    "/usr/share/glvnd/egl_vendor.d/10_nvidia.json",
    "/etc/glvnd/egl_vendor.d/10_nvidia.json",
    "/usr/local/share/glvnd/egl_vendor.d/10_nvidia.json",
];

// ---- dlopen ---------------------------------------------------------------------------------------------

const RTLD_NOW: c_int = 2;
const RTLD_LOCAL: c_int = 0;

// The C library's loader (std links it on Linux already).
extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}

/// A C string of the library, or "" for NULL.
fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: EGL, GL and dlerror give NUL-terminated strings valid during the call.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// Whether the space-separated `list` holds `word`.
fn has_word(list: *const c_char, word: &str) -> bool {
    !list.is_null() && c_text(list).split_whitespace().any(|w| w == word)
}

/// Resolves entry points by name and remembers the names it did not find.
struct Resolver<'a> {
    lookup: &'a dyn Fn(&CStr) -> *mut c_void,
    missing: Vec<&'static str>,
}

impl Resolver<'_> {
    /// The entry point `name` as the function pointer type `F`, or None (remembered).
    fn get<F: Copy>(&mut self, name: &'static str) -> Option<F> {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>(), "F must be a function pointer");
        let c = CString::new(name).expect("no NUL in a symbol name");
        let p = (self.lookup)(&c);
        if p.is_null() {
            self.missing.push(name);
            None
        } else {
            // SAFETY: F is the entry point's C signature (from the Khronos headers), a function
            // pointer of a pointer's size.
            Some(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
        }
    }
}

// ---- EGL --------------------------------------------------------------------------------------------------

/// The EGL entry points of the process, loaded once and never unloaded (vendor libraries do not
/// like being unloaded while their threads or contexts live).
struct Egl {
    get_proc_address: unsafe extern "C" fn(*const c_char) -> *mut c_void,
    get_error: unsafe extern "C" fn() -> EGLint,
    query_string: unsafe extern "C" fn(EGLDisplay, EGLint) -> *const c_char,
    initialize: unsafe extern "C" fn(EGLDisplay, *mut EGLint, *mut EGLint) -> EGLBoolean,
    choose_config: unsafe extern "C" fn(EGLDisplay, *const EGLint, *mut EGLConfig, EGLint, *mut EGLint) -> EGLBoolean,
    create_pbuffer_surface: unsafe extern "C" fn(EGLDisplay, EGLConfig, *const EGLint) -> EGLSurface,
    destroy_surface: unsafe extern "C" fn(EGLDisplay, EGLSurface) -> EGLBoolean,
    bind_api: unsafe extern "C" fn(EGLenum) -> EGLBoolean,
    create_context: unsafe extern "C" fn(EGLDisplay, EGLConfig, EGLContext, *const EGLint) -> EGLContext,
    destroy_context: unsafe extern "C" fn(EGLDisplay, EGLContext) -> EGLBoolean,
    make_current: unsafe extern "C" fn(EGLDisplay, EGLSurface, EGLSurface, EGLContext) -> EGLBoolean,
    get_current_context: unsafe extern "C" fn() -> EGLContext,
    // EGL_EXT_device_enumeration / _query, EGL_EXT_platform_base
    query_devices: unsafe extern "C" fn(EGLint, *mut EGLDeviceEXT, *mut EGLint) -> EGLBoolean,
    query_device_attrib: unsafe extern "C" fn(EGLDeviceEXT, EGLint, *mut EGLAttrib) -> EGLBoolean,
    query_device_string: unsafe extern "C" fn(EGLDeviceEXT, EGLint) -> *const c_char,
    get_platform_display: unsafe extern "C" fn(EGLenum, *mut c_void, *const EGLint) -> EGLDisplay,
}

impl Egl {
    /// "EGL_BAD_xxx (0x300n)" for the last EGL error of this thread.
    fn last_error(&self) -> String {
        // SAFETY: eglGetError takes nothing and only reads this thread's state.
        let e = unsafe { (self.get_error)() };
        let name = usize::try_from(e - EGL_SUCCESS).ok().and_then(|i| EGL_ERRORS.get(i)).unwrap_or(&"EGL error");
        format!("{} ({:#X})", name, e)
    }

    fn load() -> Result<Egl, String> {
        // SAFETY: a NUL-terminated name; the library stays loaded for the process.
        let lib = unsafe { dlopen(b"libEGL.so.1\0".as_ptr() as *const c_char, RTLD_NOW | RTLD_LOCAL) };
        if lib.is_null() {
            // SAFETY: dlerror right after the failed dlopen on this thread.
            let why = c_text(unsafe { dlerror() });
            return Err(format!(
                "libEGL.so.1 could not be loaded ({}); a GPU server without the glvnd loader needs \
                 scripts/fetch_gl_libs.sh and LD_LIBRARY_PATH=.gl/root/usr/lib/x86_64-linux-gnu \
                 (scripts/gpu_suite.sh sets it)",
                why
            ));
        }
        // SAFETY: `lib` is a live handle of dlopen; names are NUL-terminated.
        let by_dlsym = |name: &CStr| unsafe { dlsym(lib, name.as_ptr()) };
        let mut core = Resolver { lookup: &by_dlsym, missing: Vec::new() };
        let get_proc_address = core.get("eglGetProcAddress");
        let get_error = core.get("eglGetError");
        let query_string = core.get("eglQueryString");
        let initialize = core.get("eglInitialize");
        let choose_config = core.get("eglChooseConfig");
        let create_pbuffer_surface = core.get("eglCreatePbufferSurface");
        let destroy_surface = core.get("eglDestroySurface");
        let bind_api = core.get("eglBindAPI");
        let create_context = core.get("eglCreateContext");
        let destroy_context = core.get("eglDestroyContext");
        let make_current = core.get("eglMakeCurrent");
        let get_current_context = core.get("eglGetCurrentContext");
        if !core.missing.is_empty() {
            return Err(format!("libEGL.so.1 lacks {}", core.missing.join(", ")));
        }
        let get_proc_address: unsafe extern "C" fn(*const c_char) -> *mut c_void = get_proc_address.unwrap();
        // SAFETY: eglGetProcAddress takes a NUL-terminated name.
        let by_egl = |name: &CStr| unsafe { get_proc_address(name.as_ptr()) };
        let mut ext = Resolver { lookup: &by_egl, missing: Vec::new() };
        let query_devices = ext.get("eglQueryDevicesEXT");
        let query_device_attrib = ext.get("eglQueryDeviceAttribEXT");
        let query_device_string = ext.get("eglQueryDeviceStringEXT");
        let get_platform_display = ext.get("eglGetPlatformDisplayEXT");
        if !ext.missing.is_empty() {
            let query_string: unsafe extern "C" fn(EGLDisplay, EGLint) -> *const c_char = query_string.unwrap();
            // SAFETY: EGL_NO_DISPLAY asks for the client extensions.
            let exts = c_text(unsafe { query_string(std::ptr::null_mut(), EGL_EXTENSIONS) });
            return Err(format!(
                "EGL has no device enumeration (missing {}; client extensions: {})",
                ext.missing.join(", "),
                if exts.is_empty() { "none" } else { &exts }
            ));
        }
        Ok(Egl {
            get_proc_address,
            get_error: get_error.unwrap(),
            query_string: query_string.unwrap(),
            initialize: initialize.unwrap(),
            choose_config: choose_config.unwrap(),
            create_pbuffer_surface: create_pbuffer_surface.unwrap(),
            destroy_surface: destroy_surface.unwrap(),
            bind_api: bind_api.unwrap(),
            create_context: create_context.unwrap(),
            destroy_context: destroy_context.unwrap(),
            make_current: make_current.unwrap(),
            get_current_context: get_current_context.unwrap(),
            query_devices: query_devices.unwrap(),
            query_device_attrib: query_device_attrib.unwrap(),
            query_device_string: query_device_string.unwrap(),
            get_platform_display: get_platform_display.unwrap(),
        })
    }
}

/// The process's EGL (loaded on first use), or why there is none.
fn egl() -> Result<&'static Egl, String> {
    static EGL: Mutex<Option<Result<&'static Egl, String>>> = Mutex::new(None);
    let mut slot = EGL.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_none() {
        *slot = Some(Egl::load().map(|egl| &*Box::leak(Box::new(egl))));
    }
    slot.clone().unwrap()
}

/// The NVIDIA driver's EGL vendor file on this machine, if any.
pub fn nvidia_egl_vendor_file() -> Option<&'static str> {
    NVIDIA_VENDOR_FILES.iter().copied().find(|p| std::path::Path::new(p).is_file())
}

/// The hint for an EGL without NVIDIA's vendor library.
fn vendor_hint() -> String {
    let hint = "no NVIDIA EGL vendor for the glvnd loader (Mesa only, or the driver's vendor file is not where \
                the loader looks)";
    match std::env::var("__EGL_VENDOR_LIBRARY_FILENAMES") {
        Ok(set) if !set.is_empty() => format!("{}; __EGL_VENDOR_LIBRARY_FILENAMES={}", hint, set),
        _ => match nvidia_egl_vendor_file() {
            Some(file) => format!("{}; try __EGL_VENDOR_LIBRARY_FILENAMES={}", hint, file),
            None => format!("{}; no 10_nvidia.json found on this machine", hint),
        },
    }
}

// ---- GL ----------------------------------------------------------------------------------------------------

/// The GL entry points the tests use, resolved with eglGetProcAddress (every one is there in a
/// context that [`EglContext::create`] returned). Call them only with the context current.
pub struct Gl {
    pub get_string: unsafe extern "C" fn(GLenum) -> *const u8,
    pub get_error: unsafe extern "C" fn() -> GLenum,
    pub finish: unsafe extern "C" fn(),
    pub pixel_storei: unsafe extern "C" fn(GLenum, GLint),
    pub gen_buffers: unsafe extern "C" fn(GLsizei, *mut GLuint),
    pub delete_buffers: unsafe extern "C" fn(GLsizei, *const GLuint),
    pub bind_buffer: unsafe extern "C" fn(GLenum, GLuint),
    pub buffer_data: unsafe extern "C" fn(GLenum, GLsizeiptr, *const c_void, GLenum),
    pub buffer_sub_data: unsafe extern "C" fn(GLenum, GLintptr, GLsizeiptr, *const c_void),
    pub get_buffer_sub_data: unsafe extern "C" fn(GLenum, GLintptr, GLsizeiptr, *mut c_void),
    pub gen_textures: unsafe extern "C" fn(GLsizei, *mut GLuint),
    pub delete_textures: unsafe extern "C" fn(GLsizei, *const GLuint),
    pub bind_texture: unsafe extern "C" fn(GLenum, GLuint),
    pub tex_parameteri: unsafe extern "C" fn(GLenum, GLenum, GLint),
    pub tex_image_2d:
        unsafe extern "C" fn(GLenum, GLint, GLint, GLsizei, GLsizei, GLint, GLenum, GLenum, *const c_void),
    pub tex_sub_image_2d:
        unsafe extern "C" fn(GLenum, GLint, GLint, GLint, GLsizei, GLsizei, GLenum, GLenum, *const c_void),
    pub get_tex_image: unsafe extern "C" fn(GLenum, GLint, GLenum, GLenum, *mut c_void),
}

impl Gl {
    fn load(egl: &Egl) -> Result<Gl, String> {
        let get_proc_address = egl.get_proc_address;
        // SAFETY: eglGetProcAddress takes a NUL-terminated name.
        let by_egl = |name: &CStr| unsafe { get_proc_address(name.as_ptr()) };
        let mut r = Resolver { lookup: &by_egl, missing: Vec::new() };
        let get_string = r.get("glGetString");
        let get_error = r.get("glGetError");
        let finish = r.get("glFinish");
        let pixel_storei = r.get("glPixelStorei");
        let gen_buffers = r.get("glGenBuffers");
        let delete_buffers = r.get("glDeleteBuffers");
        let bind_buffer = r.get("glBindBuffer");
        let buffer_data = r.get("glBufferData");
        let buffer_sub_data = r.get("glBufferSubData");
        let get_buffer_sub_data = r.get("glGetBufferSubData");
        let gen_textures = r.get("glGenTextures");
        let delete_textures = r.get("glDeleteTextures");
        let bind_texture = r.get("glBindTexture");
        let tex_parameteri = r.get("glTexParameteri");
        let tex_image_2d = r.get("glTexImage2D");
        let tex_sub_image_2d = r.get("glTexSubImage2D");
        let get_tex_image = r.get("glGetTexImage");
        if !r.missing.is_empty() {
            return Err(format!("eglGetProcAddress finds no {}", r.missing.join(", ")));
        }
        Ok(Gl {
            get_string: get_string.unwrap(),
            get_error: get_error.unwrap(),
            finish: finish.unwrap(),
            pixel_storei: pixel_storei.unwrap(),
            gen_buffers: gen_buffers.unwrap(),
            delete_buffers: delete_buffers.unwrap(),
            bind_buffer: bind_buffer.unwrap(),
            buffer_data: buffer_data.unwrap(),
            buffer_sub_data: buffer_sub_data.unwrap(),
            get_buffer_sub_data: get_buffer_sub_data.unwrap(),
            gen_textures: gen_textures.unwrap(),
            delete_textures: delete_textures.unwrap(),
            bind_texture: bind_texture.unwrap(),
            tex_parameteri: tex_parameteri.unwrap(),
            tex_image_2d: tex_image_2d.unwrap(),
            tex_sub_image_2d: tex_sub_image_2d.unwrap(),
            get_tex_image: get_tex_image.unwrap(),
        })
    }
}

// ---- EglContext -------------------------------------------------------------------------------------------

/// Device selection and display initialisation run one at a time (tests make contexts on
/// several threads).
static CREATE: Mutex<()> = Mutex::new(());

/// Binds the desktop GL API (EGL keeps it per thread; the default is OpenGL ES) and makes
/// `context` current on the calling thread.
fn make_current(egl: &Egl, display: EGLDisplay, surface: EGLSurface, context: EGLContext) -> Result<(), String> {
    // SAFETY: live EGL objects of `display` (or EGL_NO_SURFACE for a surfaceless context).
    unsafe {
        if (egl.bind_api)(EGL_OPENGL_API) != EGL_TRUE {
            return Err(format!("eglBindAPI(EGL_OPENGL_API) failed: {}", egl.last_error()));
        }
        if (egl.make_current)(display, surface, surface, context) != EGL_TRUE {
            return Err(format!(
                "eglMakeCurrent failed: {} (a context is current on one thread at a time)",
                egl.last_error()
            ));
        }
    }
    Ok(())
}

/// `glGetString(name)` of the current context, or "" for NULL.
fn gl_string(gl: &Gl, name: GLenum) -> String {
    // SAFETY: a context is current (every caller's contract); GL strings are static.
    c_text(unsafe { (gl.get_string)(name) } as *const c_char)
}

/// The EGL objects of a context being made, destroyed if a step fails.
struct Pending {
    egl: &'static Egl,
    display: EGLDisplay,
    context: EGLContext,
    surface: EGLSurface,
}

impl Drop for Pending {
    fn drop(&mut self) {
        // SAFETY: objects made by EglContext::create on this thread.
        unsafe {
            if !self.context.is_null() {
                if (self.egl.get_current_context)() == self.context {
                    (self.egl.make_current)(
                        self.display,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                    );
                }
                (self.egl.destroy_context)(self.display, self.context);
            }
            if !self.surface.is_null() {
                (self.egl.destroy_surface)(self.display, self.surface);
            }
        }
    }
}

/// A desktop GL context on the EGL device of one CUDA device. It is made current on the thread
/// that creates it and must be used and dropped there (it is neither `Send` nor `Sync`: it
/// holds raw pointers). Dropping it deletes the GL objects it made, releases it from the thread
/// and destroys it.
pub struct EglContext {
    egl: &'static Egl,
    display: EGLDisplay,
    context: EGLContext,
    surface: EGLSurface,
    cuda_ordinal: i32,
    pub gl: Gl,
    buffers: Vec<GLuint>,
    textures: Vec<GLuint>,
}

impl EglContext {
    /// A desktop GL context on the EGL device of CUDA device `cuda_ordinal`, current on the
    /// calling thread; or why there is none.
    pub fn create(cuda_ordinal: i32) -> Result<EglContext, String> {
        let egl = egl()?;
        let _one_at_a_time = CREATE.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY (the whole body): EGL entry points called with the arguments their
        // specifications name; arrays are sized as told and attribute lists end with EGL_NONE.
        unsafe {
            // Step 2: the EGL device of this CUDA ordinal.
            let mut count: EGLint = 0;
            if (egl.query_devices)(0, std::ptr::null_mut(), &mut count) != EGL_TRUE {
                return Err(format!("eglQueryDevicesEXT failed: {}; {}", egl.last_error(), vendor_hint()));
            }
            let mut devices: Vec<EGLDeviceEXT> = vec![std::ptr::null_mut(); count.max(0) as usize];
            if count > 0 && (egl.query_devices)(count, devices.as_mut_ptr(), &mut count) != EGL_TRUE {
                return Err(format!("eglQueryDevicesEXT failed: {}", egl.last_error()));
            }
            if count <= 0 {
                return Err(format!("EGL lists no device; {}", vendor_hint()));
            }
            devices.truncate(count as usize);
            let mut chosen: EGLDeviceEXT = std::ptr::null_mut();
            let mut seen = Vec::new();
            for (i, &device) in devices.iter().enumerate() {
                let exts = (egl.query_device_string)(device, EGL_EXTENSIONS);
                let mut line = format!("EGL device {}", i);
                if has_word(exts, "EGL_EXT_device_drm") {
                    let drm = (egl.query_device_string)(device, EGL_DRM_DEVICE_FILE_EXT);
                    if !drm.is_null() {
                        line += &format!(" ({})", c_text(drm));
                    }
                }
                let mut cuda: EGLAttrib = -1;
                if has_word(exts, "EGL_NV_device_cuda")
                    && (egl.query_device_attrib)(device, EGL_CUDA_DEVICE_NV, &mut cuda) == EGL_TRUE
                {
                    line += &format!(" is CUDA device {}", cuda);
                    if cuda == cuda_ordinal as EGLAttrib && chosen.is_null() {
                        chosen = device;
                    }
                } else {
                    line += " is not a CUDA device (no EGL_NV_device_cuda)";
                }
                seen.push(line);
            }
            if chosen.is_null() {
                return Err(format!(
                    "no EGL device is CUDA device {} ({}); {}",
                    cuda_ordinal,
                    seen.join("; "),
                    vendor_hint()
                ));
            }
            // Step 3: a display on it, initialised (once per process in effect: EGL counts
            // nothing, and the display is never terminated, as other contexts may use it).
            let display = (egl.get_platform_display)(EGL_PLATFORM_DEVICE_EXT, chosen, std::ptr::null());
            if display.is_null() {
                return Err(format!("eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT) failed: {}", egl.last_error()));
            }
            let (mut major, mut minor): (EGLint, EGLint) = (0, 0);
            if (egl.initialize)(display, &mut major, &mut minor) != EGL_TRUE {
                return Err(format!("eglInitialize failed: {}", egl.last_error()));
            }
            // Destroys what is made below if a later step fails.
            let mut made = Pending { egl, display, context: std::ptr::null_mut(), surface: std::ptr::null_mut() };
            // A config for desktop GL with a pbuffer; else any desktop GL config, used surfaceless.
            let pbuffer_attribs: [EGLint; 13] = [
                EGL_SURFACE_TYPE,
                EGL_PBUFFER_BIT,
                EGL_RENDERABLE_TYPE,
                EGL_OPENGL_BIT,
                EGL_RED_SIZE,
                8,
                EGL_GREEN_SIZE,
                8,
                EGL_BLUE_SIZE,
                8,
                EGL_ALPHA_SIZE,
                8,
                EGL_NONE,
            ];
            let any_attribs: [EGLint; 5] = [EGL_SURFACE_TYPE, 0, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE];
            let mut config: EGLConfig = std::ptr::null_mut();
            let mut configs: EGLint = 0;
            let pbuffer = (egl.choose_config)(display, pbuffer_attribs.as_ptr(), &mut config, 1, &mut configs)
                == EGL_TRUE
                && configs > 0;
            if !pbuffer {
                let exts = (egl.query_string)(display, EGL_EXTENSIONS);
                if !has_word(exts, "EGL_KHR_surfaceless_context")
                    || (egl.choose_config)(display, any_attribs.as_ptr(), &mut config, 1, &mut configs) != EGL_TRUE
                    || configs == 0
                {
                    let vendor = c_text((egl.query_string)(display, EGL_VENDOR));
                    return Err(format!(
                        "the EGL display (vendor {}) has no desktop OpenGL config with a pbuffer, nor a surfaceless one",
                        if vendor.is_empty() { "?" } else { &vendor }
                    ));
                }
            }
            if pbuffer {
                let surface_attribs: [EGLint; 5] = [EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE];
                made.surface = (egl.create_pbuffer_surface)(display, config, surface_attribs.as_ptr());
                if made.surface.is_null() {
                    return Err(format!("eglCreatePbufferSurface failed: {}", egl.last_error()));
                }
            }
            // eglBindAPI is per thread and the default is OpenGL ES.
            if (egl.bind_api)(EGL_OPENGL_API) != EGL_TRUE {
                return Err(format!(
                    "eglBindAPI(EGL_OPENGL_API) failed: {} (the EGL has no desktop OpenGL)",
                    egl.last_error()
                ));
            }
            let context_attribs: [EGLint; 1] = [EGL_NONE];
            made.context = (egl.create_context)(display, config, std::ptr::null_mut(), context_attribs.as_ptr());
            if made.context.is_null() {
                return Err(format!("eglCreateContext failed: {}", egl.last_error()));
            }
            make_current(egl, display, made.surface, made.context)?;
            // Step 4: GL through eglGetProcAddress.
            let gl = Gl::load(egl)?;
            let vendor = gl_string(&gl, GL_VENDOR);
            if !vendor.contains("NVIDIA") {
                return Err(format!(
                    "the GL context is not NVIDIA's (GL_VENDOR \"{}\", GL_RENDERER \"{}\"): CUDA cannot register \
                     its objects",
                    vendor,
                    gl_string(&gl, GL_RENDERER)
                ));
            }
            let (context, surface) = (made.context, made.surface);
            std::mem::forget(made);
            Ok(EglContext {
                egl,
                display,
                context,
                surface,
                cuda_ordinal,
                gl,
                buffers: Vec::new(),
                textures: Vec::new(),
            })
        }
    }

    /// Makes the context current on the calling thread (binding the desktop GL API, which EGL
    /// keeps per thread).
    pub fn make_current(&self) -> Result<(), String> {
        make_current(self.egl, self.display, self.surface, self.context)
    }

    /// Leaves the calling thread with no current context.
    pub fn release_current(&self) {
        // SAFETY: EGL_NO_SURFACE / EGL_NO_CONTEXT release the thread's current context.
        unsafe {
            (self.egl.bind_api)(EGL_OPENGL_API);
            (self.egl.make_current)(self.display, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
        }
    }

    /// Whether this context is current on the calling thread.
    pub fn is_current(&self) -> bool {
        // SAFETY: eglGetCurrentContext only reads this thread's state.
        !self.context.is_null() && unsafe { (self.egl.get_current_context)() } == self.context
    }

    pub fn cuda_ordinal(&self) -> i32 {
        self.cuda_ordinal
    }

    /// `glGetString(name)`, or "" for NULL.
    pub fn gl_string(&self, name: GLenum) -> String {
        gl_string(&self.gl, name)
    }

    /// `glGetError()`.
    pub fn error(&self) -> GLenum {
        // SAFETY: the context is current.
        unsafe { (self.gl.get_error)() }
    }

    /// `glFinish()`: every GL command so far has run.
    pub fn finish(&self) {
        // SAFETY: the context is current.
        unsafe { (self.gl.finish)() }
    }

    /// A GL buffer holding `words` (deleted with the context), after glFinish.
    pub fn make_buffer(&mut self, words: &[u32]) -> GLuint {
        let mut name: GLuint = 0;
        // SAFETY: the context is current; `words` is valid for its byte length.
        unsafe {
            (self.gl.gen_buffers)(1, &mut name);
            (self.gl.bind_buffer)(GL_ARRAY_BUFFER, name);
            (self.gl.buffer_data)(
                GL_ARRAY_BUFFER,
                (words.len() * 4) as GLsizeiptr,
                words.as_ptr() as *const c_void,
                GL_DYNAMIC_DRAW,
            );
            (self.gl.bind_buffer)(GL_ARRAY_BUFFER, 0);
            (self.gl.finish)();
        }
        assert_ne!(name, 0, "glGenBuffers");
        assert_eq!(self.error(), GL_NO_ERROR, "making a GL buffer of {} words", words.len());
        self.buffers.push(name);
        name
    }

    /// glBufferSubData of `words` at the start of buffer `name`, then glFinish.
    pub fn write_buffer(&self, name: GLuint, words: &[u32]) {
        // SAFETY: the context is current; `words` is valid for its byte length.
        unsafe {
            (self.gl.bind_buffer)(GL_ARRAY_BUFFER, name);
            (self.gl.buffer_sub_data)(GL_ARRAY_BUFFER, 0, (words.len() * 4) as GLsizeiptr, words.as_ptr() as _);
            (self.gl.bind_buffer)(GL_ARRAY_BUFFER, 0);
            (self.gl.finish)();
        }
        assert_eq!(self.error(), GL_NO_ERROR, "glBufferSubData into GL buffer {}", name);
    }

    /// The first `words` words of buffer `name` (glGetBufferSubData).
    pub fn read_buffer(&self, name: GLuint, words: usize) -> Vec<u32> {
        let mut out = vec![0u32; words];
        // SAFETY: the context is current; `out` has room for `words` words.
        unsafe {
            (self.gl.bind_buffer)(GL_ARRAY_BUFFER, name);
            (self.gl.get_buffer_sub_data)(GL_ARRAY_BUFFER, 0, (words * 4) as GLsizeiptr, out.as_mut_ptr() as _);
            (self.gl.bind_buffer)(GL_ARRAY_BUFFER, 0);
        }
        assert_eq!(self.error(), GL_NO_ERROR, "glGetBufferSubData of GL buffer {}", name);
        out
    }

    /// A `width` x `height` GL_RGBA8 2D texture, one level, with texels `data` (tightly packed
    /// RGBA bytes) or undefined ones (deleted with the context), after glFinish.
    pub fn make_texture(&mut self, width: i32, height: i32, data: Option<&[u8]>) -> GLuint {
        if let Some(d) = data {
            assert_eq!(d.len(), (width * height * 4) as usize);
        }
        let mut name: GLuint = 0;
        // SAFETY: the context is current; `data`, when given, holds the whole image.
        unsafe {
            (self.gl.gen_textures)(1, &mut name);
            (self.gl.bind_texture)(GL_TEXTURE_2D, name);
            (self.gl.tex_parameteri)(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST as GLint);
            (self.gl.tex_parameteri)(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST as GLint);
            (self.gl.tex_parameteri)(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
            (self.gl.pixel_storei)(GL_UNPACK_ALIGNMENT, 1);
            (self.gl.pixel_storei)(GL_PACK_ALIGNMENT, 1);
            (self.gl.tex_image_2d)(
                GL_TEXTURE_2D,
                0,
                GL_RGBA8 as GLint,
                width,
                height,
                0,
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                data.map_or(std::ptr::null(), |d| d.as_ptr() as *const c_void),
            );
            (self.gl.bind_texture)(GL_TEXTURE_2D, 0);
            (self.gl.finish)();
        }
        assert_ne!(name, 0, "glGenTextures");
        assert_eq!(self.error(), GL_NO_ERROR, "making a {}x{} RGBA8 texture", width, height);
        self.textures.push(name);
        name
    }

    /// glTexSubImage2D of the whole RGBA8 texture `name`, then glFinish.
    pub fn write_texture(&self, name: GLuint, width: i32, height: i32, texels: &[u8]) {
        assert_eq!(texels.len(), (width * height * 4) as usize);
        // SAFETY: the context is current; `texels` holds the whole image.
        unsafe {
            (self.gl.bind_texture)(GL_TEXTURE_2D, name);
            (self.gl.pixel_storei)(GL_UNPACK_ALIGNMENT, 1);
            (self.gl.tex_sub_image_2d)(
                GL_TEXTURE_2D,
                0,
                0,
                0,
                width,
                height,
                GL_RGBA,
                GL_UNSIGNED_BYTE,
                texels.as_ptr() as *const c_void,
            );
            (self.gl.bind_texture)(GL_TEXTURE_2D, 0);
            (self.gl.finish)();
        }
        assert_eq!(self.error(), GL_NO_ERROR, "glTexSubImage2D into texture {}", name);
    }

    /// The RGBA8 texels of level 0 of texture `name` (glGetTexImage), `bytes` of them.
    pub fn read_texture(&self, name: GLuint, bytes: usize) -> Vec<u8> {
        let mut out = vec![0u8; bytes];
        // SAFETY: the context is current; `out` has room for the whole level (the caller's size).
        unsafe {
            (self.gl.bind_texture)(GL_TEXTURE_2D, name);
            (self.gl.pixel_storei)(GL_PACK_ALIGNMENT, 1);
            (self.gl.get_tex_image)(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, out.as_mut_ptr() as *mut c_void);
            (self.gl.bind_texture)(GL_TEXTURE_2D, 0);
        }
        assert_eq!(self.error(), GL_NO_ERROR, "glGetTexImage of texture {}", name);
        out
    }
}

impl Drop for EglContext {
    fn drop(&mut self) {
        // SAFETY: EGL objects this value made, on the thread that made them.
        unsafe {
            if !self.context.is_null() {
                if !self.is_current() {
                    let _ = self.make_current();
                }
                if self.is_current() {
                    if !self.buffers.is_empty() {
                        (self.gl.delete_buffers)(self.buffers.len() as GLsizei, self.buffers.as_ptr());
                    }
                    if !self.textures.is_empty() {
                        (self.gl.delete_textures)(self.textures.len() as GLsizei, self.textures.as_ptr());
                    }
                    (self.gl.finish)();
                    self.release_current();
                }
                (self.egl.destroy_context)(self.display, self.context);
            }
            if !self.surface.is_null() {
                (self.egl.destroy_surface)(self.display, self.surface);
            }
        }
    }
}
