/* Harness stand-in for the Open Enclave SDK headers: only the declarations the shims use, with the
 * SDK's names and signatures. The real build uses the SDK's own headers instead. */
#ifndef WEBMPC_OE_STUB_BITS_H
#define WEBMPC_OE_STUB_BITS_H
#include <stddef.h>
#include <stdint.h>

typedef enum { OE_OK = 0, OE_FAILURE = 1, OE_VERIFY_FAILED = 2, OE_INVALID_PARAMETER = 3 } oe_result_t;
typedef struct { uint8_t b[16]; } oe_uuid_t;
typedef struct { char *name; uint8_t *value; size_t value_size; } oe_claim_t;
typedef struct oe_policy oe_policy_t;
typedef struct oe_enclave oe_enclave_t;
typedef struct oe_enclave_setting oe_enclave_setting_t;
typedef enum { OE_ENCLAVE_TYPE_AUTO = 1 } oe_enclave_type_t;
#define OE_ENCLAVE_FLAG_DEBUG 0x00000001u
#define OE_CLAIM_UNIQUE_ID "unique_id"
#define OE_CLAIM_CUSTOM_CLAIMS_BUFFER "custom_claims_buffer"
#endif
