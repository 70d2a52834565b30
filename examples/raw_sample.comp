#version 450
// The shader of examples/raw_sample.rs: one textureLod per coordinate (the sampler's
// coordinates, unnormalized or normalized as the sampler says).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform sampler2D tex;
layout(set = 0, binding = 1, std430) readonly buffer Coords { vec2 coords[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Out { vec4 outv[]; };
layout(push_constant) uniform Push { uint n; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < n) outv[i] = textureLod(tex, coords[i], 0.0);
}
