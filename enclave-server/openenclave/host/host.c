/* Untrusted side of the teleport enclave: creates the enclave and relays the framed protocol of
 * enclave-server/README.md between stdin/stdout and the ECALLs, exactly as the simulation program
 * does, so the Node service spawns either backend the same way. The enclave attests inside
 * ecall_push when the session's challenge arrives (enclave.c). Also extracts the claims of
 * evidence with oe_verify_evidence (--verify-evidence), for garblers that run the Open Enclave
 * host library: the policy itself (debug, signer, product, version, TCB, measurement, report
 * data) is applied by webmpc_teleport::evidence, one code path for every backend.
 *
 *   webmpc_host ENCLAVE_PATH [--debug] [--max-wires N] [--max-gates N] [--max-rots N]
 *                            [--max-jobs N] [--max-memory BYTES]
 *   webmpc_host --verify-evidence FILE
 *
 * Never stalls: a frame over the limits both sides know (webmpc_teleport.h) on either side ends
 * the session with an Error message (TOO_LARGE) to both peers, as does a failed attestation. */
#include <openenclave/host.h>
#include <openenclave/attestation/verifier.h>
#include <openenclave/attestation/sgx/evidence.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webmpc_u.h"
#include "webmpc_host.h"
#include "webmpc_teleport.h"

/* A stdin frame: the peer byte and one message. */
#define MAX_FRAME (WEBMPC_MAX_INCOMING_MESSAGE + 1u)
#define OUT_CAP WEBMPC_MAX_OUTGOING_MESSAGE

static int read_exact(uint8_t *p, size_t n)
{
    return fread(p, 1, n, stdin) == n;
}

static void write_frame(uint8_t peer, const uint8_t *msg, size_t len)
{
    uint32_t l = (uint32_t)(len + 1); /* len <= OUT_CAP: no wrap */
    uint8_t hdr[5] = {(uint8_t)l, (uint8_t)(l >> 8), (uint8_t)(l >> 16), (uint8_t)(l >> 24), peer};
    fwrite(hdr, 1, 5, stdout);
    fwrite(msg, 1, len, stdout);
}

static void put_prefixed(uint8_t *out, size_t *pos, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    memcpy(out + *pos, &n, 4); /* little-endian hosts only (x86_64) */
    memcpy(out + *pos + 4, s, n);
    *pos += 4 + n;
}

/* An Error message to both peers (the session ends): a party left, a frame was too large, the
 * enclave could not attest. Code and detail are fixed strings, never data. */
static void report(const char *code, const char *detail)
{
    uint8_t msg[256];
    size_t pos = 1;
    msg[0] = 0xee;
    put_prefixed(msg, &pos, code);
    put_prefixed(msg, &pos, detail);
    write_frame(0, msg, pos);
    write_frame(1, msg, pos);
    fflush(stdout);
}

static int hex_out(const char *name, const uint8_t *v, size_t n)
{
    printf("%s ", name);
    for (size_t i = 0; i < n; i++)
        printf("%02x", v[i]);
    printf("\n");
    return 0;
}

static const char *tcb_name(uint32_t s)
{
    switch (s) {
    case OE_SGX_TCB_STATUS_UP_TO_DATE:
        return "up-to-date";
    case OE_SGX_TCB_STATUS_SW_HARDENING_NEEDED:
        return "sw-hardening-needed";
    case OE_SGX_TCB_STATUS_CONFIGURATION_NEEDED:
        return "configuration-needed";
    case OE_SGX_TCB_STATUS_CONFIGURATION_AND_SW_HARDENING_NEEDED:
        return "configuration-and-sw-hardening-needed";
    case OE_SGX_TCB_STATUS_OUT_OF_DATE:
        return "out-of-date";
    case OE_SGX_TCB_STATUS_OUT_OF_DATE_CONFIGURATION_NEEDED:
        return "out-of-date-configuration-needed";
    case OE_SGX_TCB_STATUS_REVOKED:
        return "revoked";
    default:
        return "invalid";
    }
}

int webmpc_host_extract_claims(const uint8_t *evidence, size_t len, webmpc_host_claims *out)
{
    static const oe_uuid_t format = {OE_FORMAT_UUID_SGX_ECDSA};
    oe_claim_t *claims = NULL;
    size_t n = 0;
    unsigned seen = 0;
    memset(out, 0, sizeof *out);
    out->tcb_status = "invalid";
    if (oe_verifier_initialize() != OE_OK)
        return WEBMPC_HOST_VERIFY_FAILED;
    if (oe_verify_evidence(&format, evidence, len, NULL, 0, NULL, 0, &claims, &n) != OE_OK)
        return WEBMPC_HOST_VERIFY_FAILED;
    for (size_t i = 0; i < n; i++) {
        const oe_claim_t *c = &claims[i];
        if (strcmp(c->name, OE_CLAIM_UNIQUE_ID) == 0 && c->value_size == 32)
            memcpy(out->unique_id, c->value, 32), seen |= 1;
        else if (strcmp(c->name, OE_CLAIM_SIGNER_ID) == 0 && c->value_size == 32)
            memcpy(out->signer_id, c->value, 32), seen |= 2;
        else if (strcmp(c->name, OE_CLAIM_PRODUCT_ID) == 0 && c->value_size >= 2)
            out->product_id = (uint16_t)(c->value[0] | c->value[1] << 8), seen |= 4;
        else if (strcmp(c->name, OE_CLAIM_SECURITY_VERSION) == 0 && c->value_size == 4)
            memcpy(&out->security_version, c->value, 4), seen |= 8;
        else if (strcmp(c->name, OE_CLAIM_ATTRIBUTES) == 0 && c->value_size == 8) {
            uint64_t a;
            memcpy(&a, c->value, 8);
            out->debug = (a & OE_EVIDENCE_ATTRIBUTES_SGX_DEBUG) != 0;
            seen |= 16;
        } else if (strcmp(c->name, OE_CLAIM_TCB_STATUS) == 0 && c->value_size == 4) {
            uint32_t s;
            memcpy(&s, c->value, 4);
            out->tcb_status = tcb_name(s);
            seen |= 32;
        } else if (strcmp(c->name, OE_CLAIM_CUSTOM_CLAIMS_BUFFER) == 0 && c->value_size == 32)
            memcpy(out->report_data, c->value, 32), seen |= 64;
    }
    oe_free_claims(claims, n);
    return seen == 127 ? WEBMPC_HOST_OK : WEBMPC_HOST_MISSING_CLAIM;
}

static int verify_main(int argc, char **argv)
{
    uint8_t *buf;
    long len;
    FILE *f;
    webmpc_host_claims c;
    if (argc != 3 || !(f = fopen(argv[2], "rb")))
        return 2;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len < 0 || len > (long)WEBMPC_MAX_INCOMING_MESSAGE || !(buf = malloc(len > 0 ? (size_t)len : 1)) ||
        fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        return 2;
    }
    fclose(f);
    int rc = webmpc_host_extract_claims(buf, (size_t)len, &c);
    free(buf);
    if (rc != WEBMPC_HOST_OK) {
        printf("%s\n", rc == WEBMPC_HOST_MISSING_CLAIM ? "missing-claim" : "invalid");
        return 1;
    }
    /* The claims, one per line, for webmpc_teleport::evidence::parse_host_claims. */
    hex_out("unique_id", c.unique_id, 32);
    hex_out("signer_id", c.signer_id, 32);
    printf("product_id %u\nsecurity_version %u\ndebug %d\ntcb_status %s\n", c.product_id, c.security_version, c.debug,
           c.tcb_status);
    hex_out("report_data", c.report_data, 32);
    return 0;
}

static int number(const char *s, uint64_t *out)
{
    char *end;
    *out = strtoull(s, &end, 10);
    return *s != '\0' && *end == '\0';
}

int main(int argc, char **argv)
{
    oe_enclave_t *enclave = NULL;
    uint32_t flags = 0;
    uint64_t lim[5] = {0, 0, 0, 0, 0};
    static const char *names[5] = {"--max-wires", "--max-gates", "--max-rots", "--max-jobs", "--max-memory"};
    uint8_t *in, *out, to;
    size_t len;
    int ret = 0, status = 0, idle = 1;

    if (argc >= 2 && strcmp(argv[1], "--verify-evidence") == 0)
        return verify_main(argc, argv);
    if (argc < 2) {
        fprintf(stderr, "usage: webmpc_host ENCLAVE_PATH [--debug] [--max-wires N] [--max-gates N] [--max-rots N] "
                        "[--max-jobs N] [--max-memory BYTES]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        int known = 0;
        if (strcmp(argv[i], "--debug") == 0) {
            /* Clients refuse a debug enclave's evidence: for development on SGX hardware only. */
            flags |= OE_ENCLAVE_FLAG_DEBUG;
            continue;
        }
        for (int k = 0; k < 5; k++)
            if (strcmp(argv[i], names[k]) == 0 && i + 1 < argc && number(argv[i + 1], &lim[k]))
                known = 1, i++, k = 5;
        if (!known)
            return 2;
    }
    if (lim[0] > UINT32_MAX)
        return 2;
    if (oe_create_webmpc_enclave(argv[1], OE_ENCLAVE_TYPE_AUTO, flags, NULL, 0, &enclave) != OE_OK) {
        fprintf(stderr, "webmpc_host: cannot create the enclave\n");
        return 2;
    }
    in = malloc(MAX_FRAME);
    out = malloc(OUT_CAP);
    if (!in || !out || ecall_start(enclave, &ret, (uint32_t)lim[0], lim[1], lim[2], lim[3], lim[4]) != OE_OK || ret != 0) {
        fprintf(stderr, "webmpc_host: the enclave did not start\n");
        return 2;
    }
    for (;;) {
        uint8_t hdr[4];
        uint32_t l;
        if (!read_exact(hdr, 4)) {
            /* The client closed its session: normal between jobs, a lost party mid-job. */
            if (!idle) {
                report("PEER_DISCONNECTED", "the enclave's input ended before the job did");
                status = 2;
            }
            break;
        }
        l = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 | (uint32_t)hdr[3] << 24;
        if (l > MAX_FRAME) {
            report("TOO_LARGE", "an input frame exceeds the enclave's incoming limit");
            status = 1;
            break;
        }
        if (l == 0 || !read_exact(in, l) || in[0] > 1) {
            status = 2;
            break;
        }
        if (ecall_push(enclave, &ret, in[0], in + 1, l - 1) != OE_OK) {
            report("ENCLAVE_FAILED", "the enclave call failed");
            status = 2;
            break;
        }
        if (ret != WEBMPC_OK && ret != WEBMPC_ERR_REJECTED) {
            /* Not a refused message (whose Error the enclave queued): the attestation failed. */
            report("ATTESTATION_FAILED", "the enclave could not produce its evidence");
            status = 1;
            break;
        }
        for (;;) {
            int r2;
            if (ecall_pull(enclave, &r2, &to, out, OUT_CAP, &len) != OE_OK || r2 == WEBMPC_EMPTY)
                break;
            if (r2 != WEBMPC_OK) {
                /* Cannot happen (every message fits OUT_CAP by construction), but never stall. */
                report("TOO_LARGE", "an enclave message exceeds the host's buffer");
                status = 1;
                goto done;
            }
            write_frame(to, out, len);
        }
        fflush(stdout);
        /* One enclave instance is one attested session: jobs follow each other until the input
         * ends; a failed job ends the session. */
        if (ecall_status(enclave, &ret) != OE_OK || ret == 2) {
            status = 1;
            break;
        }
        idle = ret == 1;
    }
done:
    fflush(stdout);
    oe_terminate_enclave(enclave);
    free(in);
    free(out);
    return status;
}
