// The proxy's AT_DISPATCH_* macros (ATen/Dispatch.h): the same families, the same
// dtype lists and the same `scalar_t`, and torch's NotImplementedError for any other
// dtype. A family the proxy lacks (complex, quantized, ...) fails to compile here and
// the source goes on to the real headers.
#pragma once
#include "c10.h"

#define AT_DISPATCH_CASE(enum_type, ...)                                                         \
    case enum_type: {                                                                            \
        using scalar_t [[maybe_unused]] = ::c10::impl::ScalarTypeToCPPTypeT<enum_type>;          \
        return __VA_ARGS__();                                                                    \
    }

#define AT_DISPATCH_SWITCH(TYPE, NAME, ...)                                                      \
    [&] {                                                                                        \
        const auto& the_type = TYPE;                                                             \
        constexpr const char* at_dispatch_name = NAME;                                           \
        const ::c10::ScalarType _st = the_type;                                                  \
        switch (_st) {                                                                           \
            __VA_ARGS__                                                                          \
            default:                                                                             \
                TORCH_CHECK_NOT_IMPLEMENTED(false, '"', at_dispatch_name,                        \
                                            "\" not implemented for '", ::c10::toString(_st), "'"); \
        }                                                                                        \
    }()

// the dtype lists of ATen/Dispatch.h
#define AT_DISPATCH_CASE_FLOATING_TYPES(...)                                                     \
    AT_DISPATCH_CASE(::c10::ScalarType::Double, __VA_ARGS__)                                     \
    AT_DISPATCH_CASE(::c10::ScalarType::Float, __VA_ARGS__)
#define AT_DISPATCH_CASE_FLOATING_TYPES_AND_HALF(...)                                            \
    AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__)                                                 \
    AT_DISPATCH_CASE(::c10::ScalarType::Half, __VA_ARGS__)
#define AT_DISPATCH_CASE_REDUCED_FLOATING_TYPES(...)                                             \
    AT_DISPATCH_CASE(::c10::ScalarType::Half, __VA_ARGS__)                                       \
    AT_DISPATCH_CASE(::c10::ScalarType::BFloat16, __VA_ARGS__)
#define AT_DISPATCH_CASE_FLOATING_TYPES_AND(T1, ...)                                             \
    AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__)                                                 \
    AT_DISPATCH_CASE(T1, __VA_ARGS__)
#define AT_DISPATCH_CASE_FLOATING_TYPES_AND2(T1, T2, ...)                                        \
    AT_DISPATCH_CASE_FLOATING_TYPES_AND(T1, __VA_ARGS__)                                         \
    AT_DISPATCH_CASE(T2, __VA_ARGS__)
#define AT_DISPATCH_CASE_FLOATING_TYPES_AND3(T1, T2, T3, ...)                                    \
    AT_DISPATCH_CASE_FLOATING_TYPES_AND2(T1, T2, __VA_ARGS__)                                    \
    AT_DISPATCH_CASE(T3, __VA_ARGS__)
#define AT_DISPATCH_CASE_INTEGRAL_TYPES(...)                                                     \
    AT_DISPATCH_CASE(::c10::ScalarType::Byte, __VA_ARGS__)                                       \
    AT_DISPATCH_CASE(::c10::ScalarType::Char, __VA_ARGS__)                                       \
    AT_DISPATCH_CASE(::c10::ScalarType::Int, __VA_ARGS__)                                        \
    AT_DISPATCH_CASE(::c10::ScalarType::Long, __VA_ARGS__)                                       \
    AT_DISPATCH_CASE(::c10::ScalarType::Short, __VA_ARGS__)
#define AT_DISPATCH_CASE_INTEGRAL_TYPES_AND(T1, ...)                                             \
    AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__)                                                 \
    AT_DISPATCH_CASE(T1, __VA_ARGS__)
#define AT_DISPATCH_CASE_ALL_TYPES(...)                                                          \
    AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__)                                                 \
    AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__)
#define AT_DISPATCH_CASE_ALL_TYPES_AND(T1, ...)                                                  \
    AT_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__)                                                      \
    AT_DISPATCH_CASE(T1, __VA_ARGS__)
#define AT_DISPATCH_CASE_ALL_TYPES_AND2(T1, T2, ...)                                             \
    AT_DISPATCH_CASE_ALL_TYPES_AND(T1, __VA_ARGS__)                                              \
    AT_DISPATCH_CASE(T2, __VA_ARGS__)
#define AT_DISPATCH_CASE_ALL_TYPES_AND3(T1, T2, T3, ...)                                         \
    AT_DISPATCH_CASE_ALL_TYPES_AND2(T1, T2, __VA_ARGS__)                                         \
    AT_DISPATCH_CASE(T3, __VA_ARGS__)

// AT_DISPATCH_<FAMILY>(type, "name", [&] { ... scalar_t ... })
#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...)                                              \
    AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...)                                     \
    AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES_AND_HALF(__VA_ARGS__))
#define AT_DISPATCH_REDUCED_FLOATING_TYPES(TYPE, NAME, ...)                                      \
    AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_REDUCED_FLOATING_TYPES(__VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND(T1, TYPE, NAME, ...)                                      \
    AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES_AND(T1, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND2(T1, T2, TYPE, NAME, ...)                                 \
    AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES_AND2(T1, T2, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND3(T1, T2, T3, TYPE, NAME, ...)                             \
    AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES_AND3(T1, T2, T3, __VA_ARGS__))
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...)                                              \
    AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__))
#define AT_DISPATCH_INTEGRAL_TYPES_AND(T1, TYPE, NAME, ...)                                      \
    AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_INTEGRAL_TYPES_AND(T1, __VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...)                                                   \
    AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND(T1, TYPE, NAME, ...)                                           \
    AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_ALL_TYPES_AND(T1, __VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND2(T1, T2, TYPE, NAME, ...)                                      \
    AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_ALL_TYPES_AND2(T1, T2, __VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND3(T1, T2, T3, TYPE, NAME, ...)                                  \
    AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_ALL_TYPES_AND3(T1, T2, T3, __VA_ARGS__))
