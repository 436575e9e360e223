// ATRACED_UNDER_SANITIZER: 1 when this file is built with ASan or TSan. g++ says
// __SANITIZE_ADDRESS__; clang says __has_feature(address_sanitizer). Tests whose subject a
// sanitizer changes (core dumps, resident memory) check it.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ATRACED_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ATRACED_UNDER_SANITIZER 1
#endif
#endif
#ifndef ATRACED_UNDER_SANITIZER
#define ATRACED_UNDER_SANITIZER 0
#endif
