/* C ABI of the webmpc teleport enclave program (wasm/crates/teleport/src/ffi.rs).
 * Link the staticlib built with:
 *   cargo build -p webmpc-teleport --no-default-features --release   (libwebmpc_teleport.a)
 * Messages are those of webmpc_teleport::frames; peers are 0 (garbler) and 1 (evaluator). */
#ifndef WEBMPC_TELEPORT_H
#define WEBMPC_TELEPORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEBMPC_OK 0
#define WEBMPC_EMPTY 1
#define WEBMPC_ERR_NULL (-1)
#define WEBMPC_ERR_LENGTH (-2)
#define WEBMPC_ERR_BUFFER_TOO_SMALL (-3)
#define WEBMPC_ERR_REJECTED (-4)
#define WEBMPC_ERR_PANIC (-5)

#define WEBMPC_EVIDENCE_SIMULATED 1
#define WEBMPC_EVIDENCE_OPEN_ENCLAVE 2

/* The sizes both sides know (webmpc_teleport::frames): the longest message the enclave accepts
 * from push, and the longest it hands out from pull (a buffer of this size never gets
 * WEBMPC_ERR_BUFFER_TOO_SMALL). */
#define WEBMPC_MAX_INCOMING_MESSAGE ((1u << 24) - 1)
#define WEBMPC_MAX_OUTGOING_MESSAGE (4u << 20)

typedef struct WebmpcEnclave WebmpcEnclave;

/* What one session may make the enclave do (webmpc_teleport::machine::Config); 0 keeps a field's
 * default. */
typedef struct WebmpcLimits {
    uint32_t max_wires;  /* wires of a circuit */
    uint64_t max_gates;  /* gates of one job */
    uint64_t max_rots;   /* ROTs of one job */
    uint64_t max_jobs;   /* jobs of one session */
    uint64_t max_memory; /* bytes one job may declare */
} WebmpcLimits;

/* entropy: exactly 32 fresh random bytes (oe_random). limits: NULL for every default. */
int32_t webmpc_enclave_new(const uint8_t *entropy, size_t entropy_len, const WebmpcLimits *limits, WebmpcEnclave **out);
void webmpc_enclave_free(WebmpcEnclave *e);
/* out: 32 bytes. */
int32_t webmpc_enclave_public_key(const WebmpcEnclave *e, uint8_t *out, size_t out_len);
int32_t webmpc_enclave_push(WebmpcEnclave *e, uint8_t from, const uint8_t *msg, size_t len);
/* After a push: WEBMPC_OK and the 32-byte report data to attest (oe_get_evidence's custom claims:
 * SHA-256("webmpc/teleport/report-data/v2" || pk || garbler nonce || evaluator nonce)) when the
 * session's challenge arrived, else WEBMPC_EMPTY. */
int32_t webmpc_enclave_evidence_request(const WebmpcEnclave *e, uint8_t *out, size_t out_len);
/* The evidence for the requested report data; queues the Evidence message for both peers. */
int32_t webmpc_enclave_attest(WebmpcEnclave *e, uint8_t format, const uint8_t *evidence, size_t evidence_len);
/* WEBMPC_EMPTY when nothing is queued; WEBMPC_ERR_BUFFER_TOO_SMALL leaves the message queued and
 * writes the needed size to *len. */
int32_t webmpc_enclave_pull(WebmpcEnclave *e, uint8_t *to, uint8_t *buf, size_t cap, size_t *len);
/* 0 a job in progress, 1 idle (fresh, or the last job finished; an instance serves many jobs), 2 failed. */
int32_t webmpc_enclave_status(const WebmpcEnclave *e);
int32_t webmpc_enclave_last_error(const WebmpcEnclave *e, uint8_t *buf, size_t cap, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
