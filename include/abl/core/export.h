/* alibi-blind: ABL_API marks what libalibi-blind.so exports. The library is compiled with
 * -fvisibility=hidden, so a function without ABL_API stays inside it; every declaration in include/
 * has it, and the test install.exports checks that the exported symbols are exactly these. */
#ifndef ABL_EXPORT_H
#define ABL_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define ABL_API __attribute__((visibility("default")))
#else
#define ABL_API
#endif

#endif
