/* Harness stand-in for the Open Enclave SDK headers: only the declarations the shims use, with the
 * SDK's names and signatures. The real build uses the SDK's own headers instead (whose claim and
 * TCB-status names these mirror; the harness's numbering of the statuses is its own, which is why
 * host.c maps them by name). */
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
typedef enum {
    OE_SGX_TCB_STATUS_UP_TO_DATE = 0,
    OE_SGX_TCB_STATUS_OUT_OF_DATE = 1,
    OE_SGX_TCB_STATUS_REVOKED = 2,
    OE_SGX_TCB_STATUS_CONFIGURATION_NEEDED = 3,
    OE_SGX_TCB_STATUS_OUT_OF_DATE_CONFIGURATION_NEEDED = 4,
    OE_SGX_TCB_STATUS_SW_HARDENING_NEEDED = 5,
    OE_SGX_TCB_STATUS_CONFIGURATION_AND_SW_HARDENING_NEEDED = 6,
    OE_SGX_TCB_STATUS_INVALID = 7
} oe_sgx_tcb_status_t;
#define OE_ENCLAVE_FLAG_DEBUG 0x00000001u
#define OE_EVIDENCE_ATTRIBUTES_SGX_DEBUG 0x0000000000000001ULL
#define OE_EVIDENCE_ATTRIBUTES_SGX_REMOTE 0x0000000000000002ULL
#define OE_CLAIM_SECURITY_VERSION "security_version"
#define OE_CLAIM_ATTRIBUTES "attributes"
#define OE_CLAIM_UNIQUE_ID "unique_id"
#define OE_CLAIM_SIGNER_ID "signer_id"
#define OE_CLAIM_PRODUCT_ID "product_id"
#define OE_CLAIM_TCB_STATUS "tcb_status"
#define OE_CLAIM_CUSTOM_CLAIMS_BUFFER "custom_claims_buffer"
#endif
