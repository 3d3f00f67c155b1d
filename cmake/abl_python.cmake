# The Python package alibi_blind (python/, docs/python.md): pure Python over the shared library with ctypes.
# `cmake --install` puts it into the prefix's Python site directory, ABL_PYTHON_DIR (Debian's
# lib/python3/dist-packages: /usr/lib/python3/dist-packages for the /usr prefix; for another prefix add
# <prefix>/lib/python3/dist-packages to PYTHONPATH), component `python` (Debian package python3-alibi-blind).
# _install.py tells the package where the library lies, relative to itself (relocatable), with the
# SONAME (found by the dynamic loader) as the fallback.
set(ABL_PYTHON_DIR lib/python3/dist-packages CACHE STRING "Where cmake --install puts the Python package (relative to the prefix)")
file(GLOB ABL_PYTHON_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/python/alibi_blind/*.py)
file(RELATIVE_PATH ABL_PYTHON_LIB_REL ${CMAKE_INSTALL_PREFIX}/${ABL_PYTHON_DIR}/alibi_blind
     ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libalibi-blind.so.${PROJECT_VERSION_MAJOR})
file(WRITE ${CMAKE_BINARY_DIR}/python/_install.py
     "\"\"\"Written by cmake --install (cmake/abl_python.cmake): the installed library, relative to this file.\"\"\"\n"
     "import os\n\n"
     "LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), \"${ABL_PYTHON_LIB_REL}\")\n"
     "SONAME = \"libalibi-blind.so.${PROJECT_VERSION_MAJOR}\"\n")
install(FILES ${ABL_PYTHON_SOURCES} ${CMAKE_BINARY_DIR}/python/_install.py
        DESTINATION ${ABL_PYTHON_DIR}/alibi_blind COMPONENT python)
