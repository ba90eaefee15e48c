// MindSpore's dump configuration file (the JSON that MINDSPORE_DUMP_CONFIG
// names), read into the kernels' dump settings (kernels/dump.h):
//
//   {"common_dump_settings": {"dump_mode": 0 | 1, "path": "DIR",
//     "net_name": "...", "iteration": "all" | "0|5-8", "input_output":
//     0 | 1 | 2, "kernels": ["MatMul", "model.msl:17"], "saved_data":
//     "tensor", "file_format": "npy", "support_device": [...],
//     "op_debug_mode": 0},
//    "e2e_dump_settings": {"enable": true, "trans_flag": true}}
//
// dump_mode 1 dumps only "kernels" (primitive names, or source sites,
// which stand in for MindSpore's scoped kernel names). What MSL does not do
// (statistics instead of tensors, .bin files, overflow detection) is an
// error naming the setting, not ignored; so is an unknown key. The files
// go straight into "path" (MindSpore nests rank/net/graph/iteration
// folders), numbered in execution order as `msl --dump` writes them.
#pragma once

#include <optional>
#include <string>

#include "kernels/dump.h"

namespace msl {

// The settings in the file at `path`; nullopt when e2e_dump_settings says
// enable: false. Throws std::runtime_error naming the file and the byte
// offset or the setting at fault.
std::optional<kernels::DumpConfig> read_dump_config(const std::string& path);

}  // namespace msl
