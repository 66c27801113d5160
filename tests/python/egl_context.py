"""A headless OpenGL context on a given CUDA device, with ctypes only, for the Python GL tests.

The Python twin of tests/gl/egl_context.hpp, made the way docs/testing.md ("GL tests") describes:
libEGL.so.1 is loaded with ctypes, the EGL device whose EGL_CUDA_DEVICE_NV equals the CUDA ordinal is picked
(EGL's order is not CUDA's), a display on it is initialised and a desktop OpenGL context is made current with a
small pbuffer (or surfaceless). GL entry points come from eglGetProcAddress; no EGL or GL module is needed.

Where this cannot work (no libEGL.so.1, Mesa only, no NVIDIA EGL vendor for the glvnd loader, no EGL device of
that CUDA ordinal) EglContext(...) raises EglUnavailable with the reason, for pytest.skip:

    try:
        ctx = EglContext(0)
    except EglUnavailable as e:
        pytest.skip(f"no NVIDIA GL context: {e}")
    vbo = ctx.gl.gen_buffer()
"""
import ctypes
import os
import threading

# GL constants (Khronos registry values).
GL_NO_ERROR = 0
GL_VENDOR = 0x1F00
GL_RENDERER = 0x1F01
GL_VERSION = 0x1F02
GL_ARRAY_BUFFER = 0x8892
GL_PIXEL_UNPACK_BUFFER = 0x88EC
GL_STATIC_DRAW = 0x88E4
GL_DYNAMIC_DRAW = 0x88E8
GL_TEXTURE_2D = 0x0DE1
GL_RENDERBUFFER = 0x8D41
GL_RGBA = 0x1908
GL_RGB = 0x1907
GL_RGBA8 = 0x8058
GL_RGB8 = 0x8051
GL_RGBA32F = 0x8814
GL_UNSIGNED_BYTE = 0x1401
GL_FLOAT = 0x1406
GL_TEXTURE_MIN_FILTER = 0x2801
GL_TEXTURE_MAG_FILTER = 0x2800
GL_TEXTURE_MAX_LEVEL = 0x813D
GL_NEAREST = 0x2600
GL_PACK_ALIGNMENT = 0x0D05
GL_UNPACK_ALIGNMENT = 0x0CF5

# EGL constants.
EGL_SUCCESS = 0x3000
EGL_NONE = 0x3038
EGL_VENDOR = 0x3053
EGL_EXTENSIONS = 0x3055
EGL_SURFACE_TYPE = 0x3033
EGL_PBUFFER_BIT = 0x0001
EGL_RENDERABLE_TYPE = 0x3040
EGL_OPENGL_BIT = 0x0008
EGL_RED_SIZE = 0x3024
EGL_GREEN_SIZE = 0x3023
EGL_BLUE_SIZE = 0x3022
EGL_ALPHA_SIZE = 0x3021
EGL_WIDTH = 0x3057
EGL_HEIGHT = 0x3056
EGL_OPENGL_API = 0x30A2
EGL_PLATFORM_DEVICE_EXT = 0x313F
EGL_CUDA_DEVICE_NV = 0x323A
EGL_DRM_DEVICE_FILE_EXT = 0x3233

_EGL_ERRORS = ["EGL_SUCCESS", "EGL_NOT_INITIALIZED", "EGL_BAD_ACCESS", "EGL_BAD_ALLOC", "EGL_BAD_ATTRIBUTE",
               "EGL_BAD_CONFIG", "EGL_BAD_CONTEXT", "EGL_BAD_CURRENT_SURFACE", "EGL_BAD_DISPLAY", "EGL_BAD_MATCH",
               "EGL_BAD_NATIVE_PIXMAP", "EGL_BAD_NATIVE_WINDOW", "EGL_BAD_PARAMETER", "EGL_BAD_SURFACE",
               "EGL_CONTEXT_LOST"]

NVIDIA_VENDOR_FILES = (
    "/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json",  # driver mounted into a container
    "/usr/share/glvnd/egl_vendor.d/10_nvidia.json",
    "/etc/glvnd/egl_vendor.d/10_nvidia.json",
    "/usr/local/share/glvnd/egl_vendor.d/10_nvidia.json",
)


class EglUnavailable(Exception):
    """No NVIDIA desktop GL context can be made here; the message says why."""


def nvidia_egl_vendor_file():
    """The NVIDIA driver's EGL vendor file on this machine, or None."""
    return next((p for p in NVIDIA_VENDOR_FILES if os.path.isfile(p)), None)


def _vendor_hint():
    hint = ("no NVIDIA EGL vendor for the glvnd loader (Mesa only, or the driver's vendor file is not where the "
            "loader looks)")
    if os.environ.get("__EGL_VENDOR_LIBRARY_FILENAMES"):
        return f"{hint}; __EGL_VENDOR_LIBRARY_FILENAMES={os.environ['__EGL_VENDOR_LIBRARY_FILENAMES']}"
    found = nvidia_egl_vendor_file()
    return f"{hint}; try __EGL_VENDOR_LIBRARY_FILENAMES={found}" if found else f"{hint}; no 10_nvidia.json found"


def _has_word(extensions, word):
    return extensions is not None and word in extensions.decode(errors="replace").split()


_vp = ctypes.c_void_p
_int = ctypes.c_int32
_uint = ctypes.c_uint32
_bool = ctypes.c_uint32
_char_p = ctypes.c_char_p


class _Egl:
    """The EGL entry points, loaded once per process and never unloaded."""

    _lock = threading.Lock()
    _instance = None

    @classmethod
    def get(cls):
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
        if cls._instance.error:
            raise EglUnavailable(cls._instance.error)
        return cls._instance

    def __init__(self):
        self.error = None
        try:
            lib = ctypes.CDLL("libEGL.so.1")
        except OSError as e:
            self.error = (f"libEGL.so.1 could not be loaded ({e}); a GPU server without the glvnd loader needs "
                          "scripts/fetch_gl_libs.sh and LD_LIBRARY_PATH=.gl/root/usr/lib/x86_64-linux-gnu")
            return
        core = {
            "eglGetProcAddress": (_vp, [_char_p]),
            "eglGetError": (_int, []),
            "eglQueryString": (_char_p, [_vp, _int]),
            "eglInitialize": (_bool, [_vp, ctypes.POINTER(_int), ctypes.POINTER(_int)]),
            "eglChooseConfig": (_bool, [_vp, ctypes.POINTER(_int), ctypes.POINTER(_vp), _int,
                                        ctypes.POINTER(_int)]),
            "eglCreatePbufferSurface": (_vp, [_vp, _vp, ctypes.POINTER(_int)]),
            "eglDestroySurface": (_bool, [_vp, _vp]),
            "eglBindAPI": (_bool, [_uint]),
            "eglCreateContext": (_vp, [_vp, _vp, _vp, ctypes.POINTER(_int)]),
            "eglDestroyContext": (_bool, [_vp, _vp]),
            "eglMakeCurrent": (_bool, [_vp, _vp, _vp, _vp]),
            "eglGetCurrentContext": (_vp, []),
        }
        missing = []
        for name, (restype, argtypes) in core.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                missing.append(name)
                continue
            fn.restype, fn.argtypes = restype, argtypes
            setattr(self, name[3:], fn)
        if missing:
            self.error = "libEGL.so.1 lacks " + ", ".join(missing)
            return
        ext = {
            "eglQueryDevicesEXT": (_bool, _int, _vp, ctypes.POINTER(_int)),
            "eglQueryDeviceAttribEXT": (_bool, _vp, _int, ctypes.POINTER(ctypes.c_ssize_t)),
            "eglQueryDeviceStringEXT": (_char_p, _vp, _int),
            "eglGetPlatformDisplayEXT": (_vp, _uint, _vp, ctypes.POINTER(_int)),
        }
        for name, signature in ext.items():
            fn = self.proc(name, ctypes.CFUNCTYPE(*signature))
            if fn is None:
                missing.append(name)
            setattr(self, name[3:], fn)
        if missing:
            exts = self.QueryString(None, EGL_EXTENSIONS)
            self.error = (f"EGL has no device enumeration (missing {', '.join(missing)}; client extensions: "
                          f"{exts.decode() if exts else 'none'})")

    def proc(self, name, prototype):
        """The entry point `name` through eglGetProcAddress as a `prototype` (a CFUNCTYPE), or None."""
        address = self.GetProcAddress(name.encode())
        return prototype(address) if address else None

    def last_error(self):
        e = self.GetError()
        i = e - EGL_SUCCESS
        return f"{_EGL_ERRORS[i] if 0 <= i < len(_EGL_ERRORS) else 'EGL error'} ({e:#x})"


def _attribs(*values):
    return (_int * len(values))(*values)


class Gl:
    """The GL entry points the tests use, with a few Pythonic helpers; every one resolved."""

    _SIGNATURES = {
        "glGetString": (_char_p, _uint),
        "glGetError": (_uint,),
        "glFinish": (None,),
        "glFlush": (None,),
        "glPixelStorei": (None, _uint, _int),
        "glGenBuffers": (None, _int, ctypes.POINTER(_uint)),
        "glDeleteBuffers": (None, _int, ctypes.POINTER(_uint)),
        "glBindBuffer": (None, _uint, _uint),
        "glBufferData": (None, _uint, ctypes.c_ssize_t, _vp, _uint),
        "glBufferSubData": (None, _uint, ctypes.c_ssize_t, ctypes.c_ssize_t, _vp),
        "glGetBufferSubData": (None, _uint, ctypes.c_ssize_t, ctypes.c_ssize_t, _vp),
        "glGenTextures": (None, _int, ctypes.POINTER(_uint)),
        "glDeleteTextures": (None, _int, ctypes.POINTER(_uint)),
        "glBindTexture": (None, _uint, _uint),
        "glTexParameteri": (None, _uint, _uint, _int),
        "glTexImage2D": (None, _uint, _int, _int, _int, _int, _int, _uint, _uint, _vp),
        "glTexSubImage2D": (None, _uint, _int, _int, _int, _int, _int, _uint, _uint, _vp),
        "glGetTexImage": (None, _uint, _int, _uint, _uint, _vp),
        "glGenRenderbuffers": (None, _int, ctypes.POINTER(_uint)),
        "glDeleteRenderbuffers": (None, _int, ctypes.POINTER(_uint)),
        "glBindRenderbuffer": (None, _uint, _uint),
        "glRenderbufferStorage": (None, _uint, _uint, _int, _int),
    }

    def __init__(self, egl):
        missing = []
        for name, signature in self._SIGNATURES.items():
            fn = egl.proc(name, ctypes.CFUNCTYPE(*signature))
            if fn is None:
                missing.append(name)
            setattr(self, name[2:], fn)  # gl.GenBuffers, gl.GetTexImage, ...
        if missing:
            raise EglUnavailable("eglGetProcAddress finds no " + ", ".join(missing))

    def string(self, name):
        s = self.GetString(name)
        return s.decode(errors="replace") if s else ""

    def gen_buffer(self, data=None, size=None, usage=GL_DYNAMIC_DRAW):
        """A new GL buffer object (bound to GL_ARRAY_BUFFER) of `data` (bytes-like) or of `size` bytes."""
        name = _uint(0)
        self.GenBuffers(1, ctypes.byref(name))
        self.BindBuffer(GL_ARRAY_BUFFER, name.value)
        if data is not None:
            buf = (ctypes.c_char * len(data)).from_buffer_copy(bytes(data))
            self.BufferData(GL_ARRAY_BUFFER, len(data), ctypes.cast(buf, _vp), usage)
        else:
            self.BufferData(GL_ARRAY_BUFFER, int(size), None, usage)
        return name.value

    def read_buffer(self, name, size, offset=0):
        """`size` bytes of GL buffer `name` from `offset`, as bytes."""
        out = ctypes.create_string_buffer(size)
        self.BindBuffer(GL_ARRAY_BUFFER, name)
        self.GetBufferSubData(GL_ARRAY_BUFFER, offset, size, ctypes.cast(out, _vp))
        return out.raw

    def delete_buffer(self, name):
        n = _uint(name)
        self.DeleteBuffers(1, ctypes.byref(n))

    def gen_texture(self, width, height, internal_format=GL_RGBA8, fmt=GL_RGBA, type_=GL_UNSIGNED_BYTE,
                    data=None):
        """A new 2D texture (bound to GL_TEXTURE_2D, one level, nearest filtering), filled from `data` if given."""
        name = _uint(0)
        self.GenTextures(1, ctypes.byref(name))
        self.BindTexture(GL_TEXTURE_2D, name.value)
        self.TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST)
        self.TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST)
        self.TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0)
        self.PixelStorei(GL_UNPACK_ALIGNMENT, 1)
        pixels = None
        if data is not None:
            keep = (ctypes.c_char * len(data)).from_buffer_copy(bytes(data))
            pixels = ctypes.cast(keep, _vp)
        self.TexImage2D(GL_TEXTURE_2D, 0, internal_format, width, height, 0, fmt, type_, pixels)
        return name.value

    def read_texture(self, name, nbytes, fmt=GL_RGBA, type_=GL_UNSIGNED_BYTE, level=0):
        """Level `level` of 2D texture `name` (`nbytes` in all), as bytes."""
        out = ctypes.create_string_buffer(nbytes)
        self.BindTexture(GL_TEXTURE_2D, name)
        self.PixelStorei(GL_PACK_ALIGNMENT, 1)
        self.GetTexImage(GL_TEXTURE_2D, level, fmt, type_, ctypes.cast(out, _vp))
        return out.raw

    def delete_texture(self, name):
        n = _uint(name)
        self.DeleteTextures(1, ctypes.byref(n))

    def check(self):
        """Raises RuntimeError if GL reports an error."""
        e = self.GetError()
        if e != GL_NO_ERROR:
            raise RuntimeError(f"GL error {e:#x}")


class EglContext:
    """A desktop GL context on the EGL device of CUDA device `cuda_ordinal`, current on the creating thread.

    `share` (another EglContext) shares its objects with this one, for use on a second thread. close() (or the
    `with` block's end) releases it from the calling thread if current there and destroys it.
    """

    def __init__(self, cuda_ordinal=0, share=None):
        egl = _Egl.get()
        self._egl = egl
        self.cuda_ordinal = cuda_ordinal
        self.display = self.context = self.surface = None
        if share is not None:
            if share.cuda_ordinal != cuda_ordinal:
                raise EglUnavailable(f"a shared context must be on the same device ({share.cuda_ordinal} vs "
                                     f"{cuda_ordinal})")
            self.display = share.display
        else:
            self.display = self._display_of(cuda_ordinal)
        try:
            self._create(share)
        except BaseException:
            self.close()
            raise

    def _display_of(self, cuda_ordinal):
        egl = self._egl
        count = _int(0)
        if not egl.QueryDevicesEXT(0, None, ctypes.byref(count)):
            raise EglUnavailable(f"eglQueryDevicesEXT failed: {egl.last_error()}; {_vendor_hint()}")
        if count.value <= 0:
            raise EglUnavailable(f"EGL lists no device; {_vendor_hint()}")
        devices = (_vp * count.value)()
        if not egl.QueryDevicesEXT(count.value, ctypes.cast(devices, _vp), ctypes.byref(count)):
            raise EglUnavailable(f"eglQueryDevicesEXT failed: {egl.last_error()}")
        chosen, seen = None, []
        for i in range(count.value):
            dev = devices[i]
            exts = egl.QueryDeviceStringEXT(dev, EGL_EXTENSIONS)
            text = f"EGL device {i}"
            if _has_word(exts, "EGL_EXT_device_drm"):
                drm = egl.QueryDeviceStringEXT(dev, EGL_DRM_DEVICE_FILE_EXT)
                if drm:
                    text += f" ({drm.decode()})"
            cuda = ctypes.c_ssize_t(-1)
            if _has_word(exts, "EGL_NV_device_cuda") and egl.QueryDeviceAttribEXT(dev, EGL_CUDA_DEVICE_NV,
                                                                                    ctypes.byref(cuda)):
                text += f" is CUDA device {cuda.value}"
                if cuda.value == cuda_ordinal and chosen is None:
                    chosen = dev
            else:
                text += " is not a CUDA device (no EGL_NV_device_cuda)"
            seen.append(text)
        if chosen is None:
            raise EglUnavailable(f"no EGL device is CUDA device {cuda_ordinal} ({'; '.join(seen)}); "
                                 f"{_vendor_hint()}")
        display = egl.GetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, chosen, None)
        if not display:
            raise EglUnavailable(f"eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT) failed: {egl.last_error()}")
        # Initialised once per process however often this runs, never terminated (other contexts may use it).
        major, minor = _int(0), _int(0)
        if not egl.Initialize(display, ctypes.byref(major), ctypes.byref(minor)):
            raise EglUnavailable(f"eglInitialize failed: {egl.last_error()}")
        return display

    def _create(self, share):
        egl = self._egl
        config, n = _vp(), _int(0)
        pbuffer_attribs = _attribs(EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                   EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, 8, EGL_NONE)
        pbuffer = bool(egl.ChooseConfig(self.display, pbuffer_attribs, ctypes.byref(config), 1, ctypes.byref(n))
                       and n.value > 0)
        if not pbuffer:
            any_attribs = _attribs(EGL_SURFACE_TYPE, 0, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE)
            if not (_has_word(egl.QueryString(self.display, EGL_EXTENSIONS), "EGL_KHR_surfaceless_context")
                    and egl.ChooseConfig(self.display, any_attribs, ctypes.byref(config), 1, ctypes.byref(n))
                    and n.value > 0):
                vendor = egl.QueryString(self.display, EGL_VENDOR)
                raise EglUnavailable(f"the EGL display (vendor {vendor.decode() if vendor else '?'}) has no desktop "
                                     "OpenGL config with a pbuffer, nor a surfaceless one")
        if pbuffer:
            self.surface = egl.CreatePbufferSurface(self.display, config,
                                                    _attribs(EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE))
            if not self.surface:
                raise EglUnavailable(f"eglCreatePbufferSurface failed: {egl.last_error()}")
        if not egl.BindAPI(EGL_OPENGL_API):  # per thread; the default is OpenGL ES
            raise EglUnavailable(f"eglBindAPI(EGL_OPENGL_API) failed: {egl.last_error()} (no desktop OpenGL)")
        self.context = egl.CreateContext(self.display, config, share.context if share is not None else None,
                                         _attribs(EGL_NONE))
        if not self.context:
            raise EglUnavailable(f"eglCreateContext failed: {egl.last_error()}")
        self.make_current()
        self.gl = Gl(egl)
        vendor = self.vendor
        if "NVIDIA" not in vendor:
            raise EglUnavailable(f'the GL context is not NVIDIA\'s (GL_VENDOR "{vendor}", GL_RENDERER '
                                 f'"{self.renderer}"): CUDA cannot register its objects')

    def make_current(self):
        """Makes the context current on the calling thread (binding desktop GL, which EGL keeps per thread)."""
        egl = self._egl
        if not egl.BindAPI(EGL_OPENGL_API):
            raise RuntimeError(f"eglBindAPI(EGL_OPENGL_API) failed: {egl.last_error()}")
        if not egl.MakeCurrent(self.display, self.surface, self.surface, self.context):
            raise RuntimeError(f"eglMakeCurrent failed: {egl.last_error()} (a context is current on one thread "
                               "at a time)")

    def release_current(self):
        """Leaves the calling thread with no current context."""
        self._egl.BindAPI(EGL_OPENGL_API)
        self._egl.MakeCurrent(self.display, None, None, None)

    @property
    def is_current(self):
        return bool(self.context) and self._egl.GetCurrentContext() == self.context

    def proc(self, name, prototype):
        """Any other GL or EGL entry point by name, as `prototype` (a ctypes.CFUNCTYPE), or None."""
        return self._egl.proc(name, prototype)

    @property
    def vendor(self):
        return self.gl.string(GL_VENDOR)

    @property
    def renderer(self):
        return self.gl.string(GL_RENDERER)

    @property
    def version(self):
        return self.gl.string(GL_VERSION)

    @property
    def has_pbuffer(self):
        return bool(self.surface)

    def close(self):
        egl = self._egl
        if self.context:
            if self.is_current:
                self.release_current()
            egl.DestroyContext(self.display, self.context)
            self.context = None
        if self.surface:
            egl.DestroySurface(self.display, self.surface)
            self.surface = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
