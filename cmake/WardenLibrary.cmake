# The layering, enforced by the compiler. Each production folder is one library, warden_<folder>,
# and no production target has the checkout's root on its include path: a library sees its own
# headers and the public headers of the libraries it links, each under its folder's name
# (#include "engine/engine.h"), so an include of a folder it does not link, or of another
# library's internal header, is "No such file". scripts/include_layers.py says which library
# may link and include which.
#
# warden_library_headers(TARGET [INTERNAL header.h …]), in the folder's CMakeLists.txt: every
# *.h of the folder is public unless listed INTERNAL (headers only that library and its tests
# include). At configure time each header is linked into the build tree,
#   include/<folder>/public/<folder>/x.h     on TARGET's PUBLIC include path
#   include/<folder>/internal/<folder>/y.h   on its PRIVATE one,
# and a new header is staged when the build re-runs the configure (the glob below). A listed
# header that does not exist fails the configure; a header nothing outside its folder
# includes that is not listed fails the include_layers test.
function(warden_library_headers target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "INTERNAL")
  get_filename_component(folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  set(stage ${PROJECT_BINARY_DIR}/include/${folder})
  file(GLOB headers CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
  foreach(header ${arg_INTERNAL})
    if(NOT header IN_LIST headers)
      message(FATAL_ERROR "${folder}/CMakeLists.txt lists ${header} as internal; there is no ${folder}/${header}")
    endif()
  endforeach()
  # Staged afresh, so a header moved to the internal side or deleted leaves no link behind.
  file(REMOVE_RECURSE ${stage})
  file(MAKE_DIRECTORY ${stage}/public/${folder} ${stage}/internal/${folder})
  foreach(header ${headers})
    if(header IN_LIST arg_INTERNAL)
      set(side internal)
    else()
      set(side public)
    endif()
    file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR}/${header} ${stage}/${side}/${folder}/${header} SYMBOLIC)
  endforeach()
  target_include_directories(${target} PUBLIC ${stage}/public PRIVATE ${stage}/internal)
  set_property(GLOBAL APPEND PROPERTY WARDEN_LIBRARIES ${target})
endfunction()

# For the include_layers and layers_enforced tests: each library's direct links to other
# libraries (include/links.txt, "warden_engine: warden_bindings"), and the include path each
# production target compiles with (include/TARGET.dirs, one directory a line).
function(warden_layers_record)
  get_property(libraries GLOBAL PROPERTY WARDEN_LIBRARIES)
  set(links "")
  foreach(library ${libraries})
    get_target_property(linked ${library} LINK_LIBRARIES)
    list(FILTER linked INCLUDE REGEX "^warden_")
    list(JOIN linked " " linked)
    string(APPEND links "${library}: ${linked}\n")
  endforeach()
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/include/links.txt CONTENT "${links}")
  foreach(target ${libraries} ${ARGN})
    file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/include/${target}.dirs
         CONTENT "$<JOIN:$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>,\n>\n")
  endforeach()
endfunction()
