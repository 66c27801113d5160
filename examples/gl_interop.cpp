// gl_interop (C++ façade, SDL2 + GLEW): CUDA animates, OpenGL draws.
//
// Every frame a CUDA kernel, compiled at run time with cucore::Program, writes
// the vertices (positions and normals) of a rippling height-field mesh straight
// into a GL vertex buffer, and a second kernel paints an animated pattern into
// a GL pixel buffer that GL then copies into the mesh's texture. GL draws the
// lit, textured mesh from an orbiting camera (core profile 3.3).
//
// Both GL buffers are mapped once per frame, together, in one batch map call,
// both kernels run inside that one mapping, and one batch unmap call ends it:
//
//   std::vector<cucore::GraphicsResource> frame = {vbo_res, pbo_res};   // registered once
//   {
//       cucore::MappedBuffers mapped = cucore::GraphicsResource::map_all(frame, stream);
//       cucore::launch(stream, mesh_config, heightfield, mapped[0], n, t);
//       cucore::launch(stream, texture_config, pattern, mapped[1], w, h, t);
//   }                                      // one unmap call for both, on `stream`
//   glTexSubImage2D(... from the pixel buffer ...); glDrawElements(...);
//
// Why: a map + unmap submits in ~10 us, but its full cost, once GL and the
// stream have caught up with it, is ~325 us on an H100/H200 server, paid per
// map call, not per resource (docs/performance.md, "OpenGL interop"). One batch
// map per frame pays it once; a map per resource pays it per resource. At the
// end the demo prints what its frames paid and measures both ways.
//
// Usage: gl_interop [--frames N] [--screenshot FILE.png] [--size WxH]
//   In a window it runs until closed (Esc or the close button), or N frames.
//   With --screenshot it renders offscreen (SDL_VIDEODRIVER=offscreen, SDL's
//   EGL pbuffer driver, unless the variable is set), stops after N frames
//   (default 120) and saves the last frame as a PNG: it runs on a headless GPU
//   server. Without an NVIDIA GL context (no GPU, Mesa) it says so and exits 0.
#include <cucore.hpp>

#include <GL/glew.h>
#include <SDL.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "png_writer.hpp"

namespace {

const char *const kKernels = R"(
// Vertex i, j of an n x n grid over [-1, 1]^2: position (x, h, z) and the unit
// normal of the height field h(x, z, t) from its analytic derivatives.
extern "C" __global__ void heightfield(float *vertices, unsigned n, float t) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;
    const float x = 2.0f * i / (n - 1) - 1.0f, z = 2.0f * j / (n - 1) - 1.0f;
    float h = 0.0f, dx = 0.0f, dz = 0.0f;
    // A ripple spreading from a centre that drifts around the middle.
    const float cx = 0.35f * cosf(0.4f * t), cz = 0.35f * sinf(0.3f * t);
    const float rx = x - cx, rz = z - cz, r = sqrtf(rx * rx + rz * rz);
    const float k = 16.0f, phase = k * r - 3.5f * t;
    const float amp = 0.08f * expf(-1.3f * r);
    h += amp * sinf(phase);
    const float dr = amp * (k * cosf(phase) - 1.3f * sinf(phase));
    if (r > 1e-6f) { dx += dr * rx / r; dz += dr * rz / r; }
    // Two travelling swells.
    const float p = 4.0f * x + 2.5f * z - 1.7f * t, q = -3.0f * x + 5.0f * z + 1.2f * t;
    h += 0.06f * sinf(p) + 0.035f * sinf(q);
    dx += 0.06f * 4.0f * cosf(p) - 0.035f * 3.0f * cosf(q);
    dz += 0.06f * 2.5f * cosf(p) + 0.035f * 5.0f * cosf(q);
    const float inv = rsqrtf(dx * dx + 1.0f + dz * dz);
    float *v = vertices + 6u * (j * n + i);
    v[0] = x; v[1] = h; v[2] = z;
    v[3] = -dx * inv; v[4] = inv; v[5] = -dz * inv;
}

// An animated plasma with grid lines, RGBA8, rows of `width` texels.
extern "C" __global__ void pattern(uchar4 *texels, unsigned width, unsigned height, float t) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= width || j >= height) return;
    const float u = (float)i / width, v = (float)j / height;
    const float du = u - 0.5f, dv = v - 0.5f;
    const float p = 0.25f * (sinf(9.0f * u + t) + sinf(11.0f * v - 1.4f * t) + sinf(7.0f * (u + v) + 0.7f * t) +
                             sinf(24.0f * sqrtf(du * du + dv * dv) - 2.0f * t));
    const float a = 3.14159265f * p;
    const float shade = (i % 32u < 2u || j % 32u < 2u) ? 0.35f : 1.0f;
    texels[j * width + i] = make_uchar4((unsigned char)(255.0f * shade * (0.5f + 0.5f * sinf(a))),
                                        (unsigned char)(255.0f * shade * (0.5f + 0.5f * sinf(a + 2.094f))),
                                        (unsigned char)(255.0f * shade * (0.5f + 0.5f * sinf(a + 4.189f))), 255);
}
)";

const char *const kVertexShader = R"(#version 330 core
layout(location = 0) in vec3 a_position;
layout(location = 1) in vec3 a_normal;
uniform mat4 u_mvp;
out vec3 v_position;
out vec3 v_normal;
out vec2 v_uv;
void main() {
    v_position = a_position;
    v_normal = a_normal;
    v_uv = a_position.xz * 0.5 + 0.5;
    gl_Position = u_mvp * vec4(a_position, 1.0);
}
)";

const char *const kFragmentShader = R"(#version 330 core
in vec3 v_position;
in vec3 v_normal;
in vec2 v_uv;
uniform sampler2D u_texture;
uniform vec3 u_eye;
uniform vec3 u_light;
out vec4 frag_color;
void main() {
    vec3 n = normalize(v_normal);
    if (!gl_FrontFacing) n = -n;
    vec3 l = normalize(u_light);
    vec3 h = normalize(l + normalize(u_eye - v_position));
    vec3 base = texture(u_texture, v_uv).rgb;
    float diffuse = max(dot(n, l), 0.0);
    float specular = pow(max(dot(n, h), 0.0), 60.0);
    vec3 color = base * (0.15 + 0.85 * diffuse) + vec3(0.6) * specular;
    frag_color = vec4(color, 1.0);
}
)";

constexpr unsigned kGrid = 192;          // mesh vertices per side
constexpr unsigned kTextureSize = 512;   // texture texels per side
constexpr float kClear[3] = {0.06f, 0.07f, 0.10f};

struct Options {
    int frames = 0;  // 0: until the window closes
    std::string screenshot;
    int width = 960, height = 600;
};

bool parse(int argc, char **argv, Options &o) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--frames" && has_value) {
            o.frames = std::atoi(argv[++i]);
            if (o.frames <= 0) return false;
        } else if (arg == "--screenshot" && has_value) {
            o.screenshot = argv[++i];
        } else if (arg == "--size" && has_value) {
            if (std::sscanf(argv[++i], "%dx%d", &o.width, &o.height) != 2 || o.width < 16 || o.height < 16 ||
                o.width > 8192 || o.height > 8192)
                return false;
        } else {
            return false;
        }
    }
    if (!o.screenshot.empty() && o.frames == 0) o.frames = 120;
    return true;
}

// Column-major 4x4 matrices for glUniformMatrix4fv.
struct Mat4 {
    float m[16] = {};
};
struct Vec3 {
    float x, y, z;
};
Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
Vec3 cross(Vec3 a, Vec3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
Vec3 normalize(Vec3 a) {
    const float s = 1.0f / std::sqrt(dot(a, a));
    return {a.x * s, a.y * s, a.z * s};
}
Mat4 operator*(const Mat4 &a, const Mat4 &b) {
    Mat4 r;
    for (int c = 0; c < 4; ++c)
        for (int row = 0; row < 4; ++row)
            for (int k = 0; k < 4; ++k) r.m[c * 4 + row] += a.m[k * 4 + row] * b.m[c * 4 + k];
    return r;
}
Mat4 perspective(float fovy, float aspect, float near_z, float far_z) {
    const float f = 1.0f / std::tan(fovy / 2.0f);
    Mat4 r;
    r.m[0] = f / aspect;
    r.m[5] = f;
    r.m[10] = (far_z + near_z) / (near_z - far_z);
    r.m[11] = -1.0f;
    r.m[14] = 2.0f * far_z * near_z / (near_z - far_z);
    return r;
}
Mat4 look_at(Vec3 eye, Vec3 center, Vec3 up) {
    const Vec3 f = normalize(center - eye), s = normalize(cross(f, up)), u = cross(s, f);
    Mat4 r;
    r.m[0] = s.x, r.m[4] = s.y, r.m[8] = s.z;
    r.m[1] = u.x, r.m[5] = u.y, r.m[9] = u.z;
    r.m[2] = -f.x, r.m[6] = -f.y, r.m[10] = -f.z;
    r.m[12] = -dot(s, eye), r.m[13] = -dot(u, eye), r.m[14] = dot(f, eye), r.m[15] = 1.0f;
    return r;
}

// Says why there is nothing to show and ends the program with status 0.
int unavailable(const std::string &why) {
    std::printf("gl_interop: %s\n", why.c_str());
    std::printf("This demo needs an NVIDIA GPU with its OpenGL driver (a window, or headless with\n"
                "SDL_VIDEODRIVER=offscreen and NVIDIA's EGL). Nothing to show here; exiting.\n");
    return 0;
}

GLuint compile_shader(GLenum type, const char *source) {
    const GLuint shader = glCreateShader(type);
    glShaderSource(shader, 1, &source, nullptr);
    glCompileShader(shader);
    GLint ok = GL_FALSE;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (ok != GL_TRUE) {
        char log[2048] = {};
        glGetShaderInfoLog(shader, sizeof log, nullptr, log);
        throw std::runtime_error(std::string("shader compilation failed: ") + log);
    }
    return shader;
}

GLuint link_program() {
    const GLuint vs = compile_shader(GL_VERTEX_SHADER, kVertexShader);
    const GLuint fs = compile_shader(GL_FRAGMENT_SHADER, kFragmentShader);
    const GLuint program = glCreateProgram();
    glAttachShader(program, vs);
    glAttachShader(program, fs);
    glLinkProgram(program);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = GL_FALSE;
    glGetProgramiv(program, GL_LINK_STATUS, &ok);
    if (ok != GL_TRUE) {
        char log[2048] = {};
        glGetProgramInfoLog(program, sizeof log, nullptr, log);
        throw std::runtime_error(std::string("shader link failed: ") + log);
    }
    return program;
}

void check_gl(const char *where) {
    const GLenum error = glGetError();
    if (error != GL_NO_ERROR) {
        char message[128];
        std::snprintf(message, sizeof message, "GL error 0x%04x %s", static_cast<unsigned>(error), where);
        throw std::runtime_error(message);
    }
}

// The GL objects of the scene; created and deleted with the GL context current.
struct Scene {
    GLuint program = 0, vao = 0, vbo = 0, ibo = 0, texture = 0, pbo = 0;
    GLuint fbo_ms = 0, color_ms = 0, depth_ms = 0, fbo = 0, color = 0;
    GLsizei index_count = 0;
    int width = 0, height = 0;

    Scene(int w, int h) : width(w), height(h) {
        program = link_program();
        glGenVertexArrays(1, &vao);
        glBindVertexArray(vao);
        glGenBuffers(1, &vbo);
        glBindBuffer(GL_ARRAY_BUFFER, vbo);
        glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(kGrid) * kGrid * 6 * sizeof(float), nullptr,
                     GL_DYNAMIC_DRAW);
        glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), nullptr);
        glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float),
                              reinterpret_cast<const void *>(3 * sizeof(float)));
        glEnableVertexAttribArray(0);
        glEnableVertexAttribArray(1);
        std::vector<GLuint> indices;
        indices.reserve(static_cast<std::size_t>(kGrid - 1) * (kGrid - 1) * 6);
        for (GLuint j = 0; j + 1 < kGrid; ++j)
            for (GLuint i = 0; i + 1 < kGrid; ++i) {
                const GLuint a = j * kGrid + i, b = a + 1, c = a + kGrid, d = c + 1;
                indices.insert(indices.end(), {a, c, b, b, c, d});
            }
        index_count = static_cast<GLsizei>(indices.size());
        glGenBuffers(1, &ibo);
        glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, ibo);
        glBufferData(GL_ELEMENT_ARRAY_BUFFER, static_cast<GLsizeiptr>(indices.size() * sizeof(GLuint)),
                     indices.data(), GL_STATIC_DRAW);
        glBindVertexArray(0);

        glGenTextures(1, &texture);
        glBindTexture(GL_TEXTURE_2D, texture);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, kTextureSize, kTextureSize, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        glBindTexture(GL_TEXTURE_2D, 0);
        // The texels CUDA paints: a pixel buffer GL copies into the texture
        // (upload_texture), so that a frame's CUDA writes all go to GL buffers,
        // which map together in one batch call (an image maps on its own).
        glGenBuffers(1, &pbo);
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, pbo);
        glBufferData(GL_PIXEL_UNPACK_BUFFER, static_cast<GLsizeiptr>(kTextureSize) * kTextureSize * 4, nullptr,
                     GL_STREAM_DRAW);
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);

        // The scene renders into a 4x multisampled framebuffer, resolved into a
        // plain one (read for the screenshot) and blitted to the window.
        GLint max_samples = 1;
        glGetIntegerv(GL_MAX_SAMPLES, &max_samples);
        const GLsizei samples = std::min(4, std::max(1, max_samples));
        glGenRenderbuffers(1, &color_ms);
        glBindRenderbuffer(GL_RENDERBUFFER, color_ms);
        glRenderbufferStorageMultisample(GL_RENDERBUFFER, samples, GL_RGBA8, width, height);
        glGenRenderbuffers(1, &depth_ms);
        glBindRenderbuffer(GL_RENDERBUFFER, depth_ms);
        glRenderbufferStorageMultisample(GL_RENDERBUFFER, samples, GL_DEPTH_COMPONENT24, width, height);
        glGenFramebuffers(1, &fbo_ms);
        glBindFramebuffer(GL_FRAMEBUFFER, fbo_ms);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_ms);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depth_ms);
        if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
            throw std::runtime_error("the multisampled framebuffer is incomplete");
        glGenRenderbuffers(1, &color);
        glBindRenderbuffer(GL_RENDERBUFFER, color);
        glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
        glGenFramebuffers(1, &fbo);
        glBindFramebuffer(GL_FRAMEBUFFER, fbo);
        glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
        if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
            throw std::runtime_error("the resolve framebuffer is incomplete");
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        check_gl("creating the scene");
    }
    Scene(const Scene &) = delete;
    Scene &operator=(const Scene &) = delete;
    ~Scene() {
        glDeleteFramebuffers(1, &fbo);
        glDeleteRenderbuffers(1, &color);
        glDeleteFramebuffers(1, &fbo_ms);
        glDeleteRenderbuffers(1, &depth_ms);
        glDeleteRenderbuffers(1, &color_ms);
        glDeleteTextures(1, &texture);
        glDeleteBuffers(1, &pbo);
        glDeleteBuffers(1, &ibo);
        glDeleteBuffers(1, &vbo);
        glDeleteVertexArrays(1, &vao);
        glDeleteProgram(program);
    }

    // Copies the pixel buffer (once CUDA has unmapped it) into the texture, on the GPU.
    void upload_texture() const {
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, pbo);
        glBindTexture(GL_TEXTURE_2D, texture);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, kTextureSize, kTextureSize, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
        glBindTexture(GL_TEXTURE_2D, 0);
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
        check_gl("copying the pixel buffer into the texture");
    }

    // Draws the mesh at time `t` into the multisampled framebuffer and resolves it.
    void draw(float t) const {
        glBindFramebuffer(GL_FRAMEBUFFER, fbo_ms);
        glViewport(0, 0, width, height);
        glEnable(GL_DEPTH_TEST);
        glClearColor(kClear[0], kClear[1], kClear[2], 1.0f);
        glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        const float angle = 0.6f + 0.15f * t;
        const Vec3 eye = {2.6f * std::cos(angle), 1.45f, 2.6f * std::sin(angle)};
        const Mat4 mvp = perspective(0.75f, static_cast<float>(width) / static_cast<float>(height), 0.05f, 20.0f) *
                         look_at(eye, {0.0f, -0.1f, 0.0f}, {0.0f, 1.0f, 0.0f});
        glUseProgram(program);
        glUniformMatrix4fv(glGetUniformLocation(program, "u_mvp"), 1, GL_FALSE, mvp.m);
        glUniform3f(glGetUniformLocation(program, "u_eye"), eye.x, eye.y, eye.z);
        glUniform3f(glGetUniformLocation(program, "u_light"), -0.4f, 1.0f, 0.3f);
        glUniform1i(glGetUniformLocation(program, "u_texture"), 0);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_2D, texture);
        glBindVertexArray(vao);
        glDrawElements(GL_TRIANGLES, index_count, GL_UNSIGNED_INT, nullptr);
        glBindVertexArray(0);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo_ms);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, fbo);
        glBlitFramebuffer(0, 0, width, height, 0, 0, width, height, GL_COLOR_BUFFER_BIT, GL_NEAREST);
        check_gl("drawing");
    }

    // Shows the resolved frame in the window's framebuffer, scaled to it.
    void present(int window_width, int window_height) const {
        glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
        glClearColor(0.0f, 0.0f, 0.0f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        glBlitFramebuffer(0, 0, width, height, 0, 0, window_width, window_height, GL_COLOR_BUFFER_BIT, GL_LINEAR);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
    }

    // The resolved frame, RGBA8, rows top to bottom.
    std::vector<std::uint8_t> read_pixels() const {
        std::vector<std::uint8_t> bottom_up(static_cast<std::size_t>(width) * height * 4);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, bottom_up.data());
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        check_gl("reading the frame");
        std::vector<std::uint8_t> top_down(bottom_up.size());
        const std::size_t row = static_cast<std::size_t>(width) * 4;
        for (int y = 0; y < height; ++y)
            std::memcpy(&top_down[static_cast<std::size_t>(y) * row],
                        &bottom_up[static_cast<std::size_t>(height - 1 - y) * row], row);
        return top_down;
    }
};

// The share of pixels that differ from the clear colour: the mesh covers a
// good part of the frame, so a small share means nothing was drawn.
double covered(const std::vector<std::uint8_t> &rgba) {
    std::size_t drawn = 0;
    for (std::size_t p = 0; p + 3 < rgba.size(); p += 4) {
        int difference = 0;
        for (int c = 0; c < 3; ++c)
            difference += std::abs(static_cast<int>(rgba[p + c]) - static_cast<int>(std::lround(kClear[c] * 255.0f)));
        if (difference > 6) ++drawn;
    }
    return rgba.empty() ? 0.0 : static_cast<double>(drawn) / static_cast<double>(rgba.size() / 4);
}

using Clock = std::chrono::steady_clock;

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// The cost of mapping a frame's resources, measured apart from the animation
// (in a frame the full cost overlaps with GL's own work, so it cannot be read
// off the frames alone): kMapCostRounds rounds of map + unmap of all of them, each round followed by the
// drain that a frame's end amounts to (stream synchronize, glFinish), all
// timed (full), and the map and unmap calls alone (host submit); once with one
// batch map call, once with one map call per resource. Per round, in us.
struct MapCost {
    double batch_submit = 0, batch_full = 0, single_submit = 0, single_full = 0;
};

constexpr int kMapCostRounds = 32;

MapCost measure_map_cost(const std::vector<cucore::GraphicsResource> &resources, const cucore::Stream &stream) {
    auto rounds = [&](bool batch, int n, double *submit_us, double *full_us) {
        Clock::duration submit{};
        const Clock::time_point start = Clock::now();
        for (int i = 0; i < n; ++i) {
            const Clock::time_point t0 = Clock::now();
            if (batch) {
                cucore::MappedBuffers mapped = cucore::GraphicsResource::map_all(resources, stream);
                mapped.unmap();  // one call for all
            } else {
                std::vector<cucore::Buffer> mapped;
                for (const cucore::GraphicsResource &r : resources) mapped.push_back(r.map(stream));
                mapped.clear();  // one unmap call each
            }
            submit += Clock::now() - t0;
            stream.synchronize();
            glFinish();
        }
        *submit_us = micros(submit) / n;
        *full_us = micros(Clock::now() - start) / n;
    };
    MapCost cost;
    double ignored = 0;
    rounds(true, 2, &ignored, &ignored);  // warm-up
    rounds(false, 2, &ignored, &ignored);
    rounds(true, kMapCostRounds, &cost.batch_submit, &cost.batch_full);
    rounds(false, kMapCostRounds, &cost.single_submit, &cost.single_full);
    return cost;
}

// Everything after a usable NVIDIA GL context exists. Returns the exit status.
int run(SDL_Window *window, const Options &options, int cuda_ordinal) {
    const cucore::Device dev(cuda_ordinal);
    const cucore::Stream stream = dev.create_stream();
    const cucore::ComputeCapability cc = dev.compute_capability();
    std::printf("CUDA device %d: %.*s (compute capability %d.%d)\n", cuda_ordinal,
                static_cast<int>(dev.name().size()), dev.name().data(), cc.major, cc.minor);

    cucore::ProgramOptions program_options;
    program_options.arch = "sm_" + std::to_string(cc.major * 10 + cc.minor);
    program_options.std = "c++17";
    program_options.use_fast_math = true;
    const cucore::ObjectCode code =
        cucore::Program::create(kKernels, CUCORE_CODE_CXX, program_options).compile(CUCORE_CODE_CUBIN);
    const cucore::Kernel heightfield = code.get_kernel("heightfield");
    const cucore::Kernel pattern = code.get_kernel("pattern");
    std::printf("Kernels compiled for %s with NVRTC\n", program_options.arch.c_str());

    const Scene scene(options.width, options.height);
    // Registered once; mapped together once per frame (map_all). CUDA rewrites
    // both whole buffers every frame: write_discard lets the driver skip
    // keeping their old contents.
    using Flags = cucore::GraphicsRegisterFlags;
    std::vector<cucore::GraphicsResource> frame_resources;
    frame_resources.push_back(cucore::GraphicsResource::from_gl_buffer(dev, scene.vbo, Flags::write_discard));
    frame_resources.push_back(cucore::GraphicsResource::from_gl_buffer(dev, scene.pbo, Flags::write_discard));
    std::printf("Registered GL buffer %u (%u vertices) and GL pixel buffer %u (texels of a %ux%u RGBA8 texture) "
                "with CUDA\n",
                scene.vbo, kGrid * kGrid, scene.pbo, kTextureSize, kTextureSize);

    const cucore::LaunchConfig mesh_config({(kGrid + 15) / 16, (kGrid + 15) / 16}, {16, 16});
    const cucore::LaunchConfig texture_config({(kTextureSize + 15) / 16, (kTextureSize + 15) / 16}, {16, 16});
    const bool offscreen = !options.screenshot.empty();
    const auto start = Clock::now();
    Clock::duration map_submit{};  // the frames' map and unmap calls
    int frame = 0;
    bool quit = false;
    while (!quit && (options.frames == 0 || frame < options.frames)) {
        SDL_Event event;
        while (SDL_PollEvent(&event)) {
            if (event.type == SDL_QUIT || (event.type == SDL_KEYDOWN && event.key.keysym.sym == SDLK_ESCAPE))
                quit = true;
        }
        // Offscreen runs use a fixed time step so the screenshot does not
        // depend on the speed of the machine.
        const float t = offscreen ? static_cast<float>(frame) / 60.0f
                                  : std::chrono::duration<float>(std::chrono::steady_clock::now() - start).count();
        {
            // One batch map of everything CUDA writes this frame, both kernels
            // inside it, one batch unmap (on `stream`) before GL touches the
            // buffers again: the frame pays a map's full cost once.
            const Clock::time_point t0 = Clock::now();
            cucore::MappedBuffers mapped = cucore::GraphicsResource::map_all(frame_resources, stream);
            const Clock::time_point t1 = Clock::now();
            cucore::launch(stream, mesh_config, heightfield, mapped[0], kGrid, t);
            cucore::launch(stream, texture_config, pattern, mapped[1], kTextureSize, kTextureSize, t);
            const Clock::time_point t2 = Clock::now();
            mapped.unmap();
            map_submit += (t1 - t0) + (Clock::now() - t2);
        }
        scene.upload_texture();
        scene.draw(t);
        int drawable_width = 0, drawable_height = 0;
        SDL_GL_GetDrawableSize(window, &drawable_width, &drawable_height);
        scene.present(drawable_width, drawable_height);
        SDL_GL_SwapWindow(window);
        ++frame;
    }
    glFinish();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("%d frames in %.2f s (%.1f frames/s)\n", frame, seconds, seconds > 0 ? frame / seconds : 0.0);

    // The lever, in numbers: what the frames paid, and the full cost of one
    // batch map against one map per resource (measured now, drains timed).
    const MapCost cost = measure_map_cost(frame_resources, stream);
    std::printf("Map cost per frame (%zu GL buffers):\n", frame_resources.size());
    if (frame > 0)
        std::printf("  paid in the %d frames: one batch map + one batch unmap, host submit %.1f us\n", frame,
                    micros(map_submit) / frame);
    std::printf("  measured apart, the stream and GL drained after each of %d rounds:\n"
                "    one batch map:          host submit %7.1f us, full cost %7.1f us\n"
                "    one map per resource:   host submit %7.1f us, full cost %7.1f us (%.2fx the batch)\n",
                kMapCostRounds, cost.batch_submit, cost.batch_full, cost.single_submit, cost.single_full,
                cost.batch_full > 0 ? cost.single_full / cost.batch_full : 0.0);

    int status = 0;
    if (offscreen) {
        const std::vector<std::uint8_t> pixels = scene.read_pixels();
        const double share = covered(pixels);
        if (!png_writer::write_rgba(options.screenshot, pixels.data(), static_cast<std::uint32_t>(scene.width),
                                    static_cast<std::uint32_t>(scene.height))) {
            std::fprintf(stderr, "gl_interop: cannot write %s: %s\n", options.screenshot.c_str(), std::strerror(errno));
            status = 1;
        } else {
            std::printf("Saved frame %d (%dx%d) to %s; the mesh covers %.0f%% of it\n", frame, scene.width,
                        scene.height, options.screenshot.c_str(), 100.0 * share);
        }
        if (share < 0.10) {
            std::fprintf(stderr, "gl_interop: FAILED: only %.1f%% of the frame was drawn\n", 100.0 * share);
            status = 1;
        }
    }
    // Unregister while the GL context is still current, before the GL objects go.
    for (const cucore::GraphicsResource &r : frame_resources) r.close();
    stream.synchronize();
    std::printf(status == 0 ? "gl_interop OK\n" : "gl_interop FAILED\n");
    return status;
}

} // namespace

int main(int argc, char **argv) {
    Options options;
    if (!parse(argc, argv, options)) {
        std::fprintf(stderr, "usage: %s [--frames N] [--screenshot FILE.png] [--size WxH]\n", argv[0]);
        return 2;
    }
    std::printf("libcucore %s\n", cucore::version_string());
    const bool offscreen = !options.screenshot.empty();
    // Headless: SDL's offscreen driver makes an EGL pbuffer context with no display.
    if (offscreen) setenv("SDL_VIDEODRIVER", "offscreen", 0);

    if (SDL_Init(SDL_INIT_VIDEO) != 0)
        return unavailable(std::string("SDL cannot start a video driver: ") + SDL_GetError());
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
    const Uint32 window_flags = SDL_WINDOW_OPENGL | (offscreen ? SDL_WINDOW_HIDDEN : SDL_WINDOW_RESIZABLE);
    SDL_Window *window = SDL_CreateWindow("libcucore: CUDA-OpenGL interop", SDL_WINDOWPOS_CENTERED,
                                          SDL_WINDOWPOS_CENTERED, options.width, options.height, window_flags);
    if (window == nullptr) {
        const std::string why = std::string("SDL cannot open a GL window (video driver ") +
                                (SDL_GetCurrentVideoDriver() ? SDL_GetCurrentVideoDriver() : "none") +
                                "): " + SDL_GetError();
        SDL_Quit();
        return unavailable(why);
    }
    SDL_GLContext context = SDL_GL_CreateContext(window);
    if (context == nullptr) {
        const std::string why = std::string("SDL cannot create an OpenGL 3.3 core context: ") + SDL_GetError();
        SDL_DestroyWindow(window);
        SDL_Quit();
        return unavailable(why);
    }
    SDL_GL_SetSwapInterval(offscreen ? 0 : 1);

    int status = 0;
    std::string why_not;
    // GLEW 2.2 built for GLX returns GLEW_ERROR_NO_GLX_DISPLAY (4) under an EGL
    // context after it has loaded every GL entry point: success when GL answers.
    glewExperimental = GL_TRUE;
    const GLenum glew = glewInit();
    const GLubyte *gl_version = glGetString(GL_VERSION);
    if (glew != GLEW_OK && !(glew == 4 && gl_version != nullptr)) {
        why_not = std::string("GLEW cannot load OpenGL: ") + reinterpret_cast<const char *>(glewGetErrorString(glew));
    } else if (gl_version == nullptr) {
        why_not = "the GL context answers no GL_VERSION";
    } else {
        glGetError();  // GLEW may leave GL_INVALID_ENUM behind in a core profile
        const char *vendor = reinterpret_cast<const char *>(glGetString(GL_VENDOR));
        const char *renderer = reinterpret_cast<const char *>(glGetString(GL_RENDERER));
        std::printf("SDL video driver %s; GL %s, %s (%s)\n", SDL_GetCurrentVideoDriver(),
                    reinterpret_cast<const char *>(gl_version), renderer ? renderer : "?", vendor ? vendor : "?");
        if (vendor == nullptr || std::strstr(vendor, "NVIDIA") == nullptr) {
            why_not = std::string("the GL context is ") + (renderer ? renderer : "?") + " from " +
                      (vendor ? vendor : "an unknown vendor") + ", not NVIDIA's: CUDA cannot share its objects";
        } else {
            int cuda_ordinal = -1;
            try {
                const std::vector<int> ordinals = cucore::gl_get_devices();
                if (ordinals.empty())
                    why_not = "CUDA sees no device behind this GL context";
                else
                    cuda_ordinal = ordinals.front();
            } catch (const cucore::Error &e) {
                why_not = std::string("CUDA cannot use this GL context: ") + e.what();
            }
            if (cuda_ordinal >= 0) {
                try {
                    status = run(window, options, cuda_ordinal);
                } catch (const std::exception &e) {
                    std::fprintf(stderr, "gl_interop: error: %s\n", e.what());
                    status = 1;
                }
            }
        }
    }
    SDL_GL_DeleteContext(context);
    SDL_DestroyWindow(window);
    SDL_Quit();
    return why_not.empty() ? status : unavailable(why_not);
}
