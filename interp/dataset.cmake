# The data pipeline's C++ core (msl._dataset): IDX/CIFAR readers need zlib,
# ImageFolder decoding needs libjpeg(-turbo) and libpng. The sources
# (dataset_*.cpp, module_msl_dataset.cpp) are in msl_interp through the
# interp/*.cpp glob; they are listed here too so the dependency is explicit
# (CMake compiles a source listed twice in one target once).
if(TARGET msl_interp)
  find_package(ZLIB REQUIRED)
  find_package(JPEG REQUIRED)
  find_package(PNG REQUIRED)
  target_sources(msl_interp PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/dataset_readers.cpp
    ${CMAKE_CURRENT_LIST_DIR}/dataset_codec.cpp
    ${CMAKE_CURRENT_LIST_DIR}/dataset_transforms.cpp
    ${CMAKE_CURRENT_LIST_DIR}/dataset_pool.cpp
    ${CMAKE_CURRENT_LIST_DIR}/dataset_batch.cpp
    ${CMAKE_CURRENT_LIST_DIR}/module_msl_dataset.cpp)
  target_link_libraries(msl_interp PRIVATE ZLIB::ZLIB JPEG::JPEG PNG::PNG)
endif()
