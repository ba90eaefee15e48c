# Checkpoint files (msl._checkpoint): MindSpore's protobuf .ckpt and
# safetensors. Included from interp/CMakeLists.txt after msl_interp is made.
#
# The .ckpt schema (checkpoint.proto, MindSpore's own) is compiled by protoc
# at build time into the build folder; the generated code is third-party
# style, so it is compiled without the project's warning flags and its header
# is reached through a SYSTEM include folder.
if(NOT TARGET msl_interp)
  return()
endif()

find_package(Protobuf REQUIRED)
# zlib: CRC32 for MindSpore's crc_check (the same function as Python's
# binascii.crc32).
find_package(ZLIB REQUIRED)

set(MSL_CKPT_PROTO ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint.proto)
set(MSL_CKPT_GEN_DIR ${CMAKE_CURRENT_BINARY_DIR}/checkpoint_proto)
set(MSL_CKPT_PB_CC ${MSL_CKPT_GEN_DIR}/checkpoint.pb.cc)
set(MSL_CKPT_PB_H ${MSL_CKPT_GEN_DIR}/checkpoint.pb.h)
file(MAKE_DIRECTORY ${MSL_CKPT_GEN_DIR})
add_custom_command(
  OUTPUT ${MSL_CKPT_PB_CC} ${MSL_CKPT_PB_H}
  COMMAND protobuf::protoc --cpp_out=${MSL_CKPT_GEN_DIR} -I ${CMAKE_CURRENT_SOURCE_DIR} ${MSL_CKPT_PROTO}
  DEPENDS ${MSL_CKPT_PROTO}
  COMMENT "protoc checkpoint.proto"
  VERBATIM)
set_source_files_properties(${MSL_CKPT_PB_CC} PROPERTIES COMPILE_OPTIONS "-w")

# The interp/*.cpp glob already lists the C++ sources; naming them here keeps
# this file self-contained (CMake ignores a source added twice).
target_sources(msl_interp PRIVATE
  ${MSL_CKPT_PB_CC}
  ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint_ckpt.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint_safetensors.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint_io.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint_json.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/module_msl_checkpoint.cpp)
target_include_directories(msl_interp SYSTEM PRIVATE ${MSL_CKPT_GEN_DIR} ${Protobuf_INCLUDE_DIRS})
target_link_libraries(msl_interp PUBLIC protobuf::libprotobuf)
target_link_libraries(msl_interp PRIVATE ZLIB::ZLIB)
