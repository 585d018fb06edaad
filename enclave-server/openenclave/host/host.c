/* Untrusted side of the teleport enclave: creates the enclave and relays the framed protocol of
 * enclave-server/README.md between stdin/stdout and the ECALLs, exactly as the simulation program
 * does, so the Node service spawns either backend the same way. Also verifies evidence with
 * oe_verify_evidence (--verify-evidence), for garblers that run the Open Enclave host library.
 *
 *   webmpc_host ENCLAVE_PATH [--debug] [--max-wires N]
 *   webmpc_host --verify-evidence FILE MRENCLAVE_HEX REPORT_DATA_HEX
 */
#include <openenclave/host.h>
#include <openenclave/attestation/verifier.h>
#include <openenclave/attestation/sgx/evidence.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webmpc_u.h"
#include "webmpc_host.h"

#define MAX_FRAME (1u << 24)
#define OUT_CAP ((1u << 22) + 64)

static int read_exact(uint8_t *p, size_t n)
{
    return fread(p, 1, n, stdin) == n;
}

static void write_frame(uint8_t peer, const uint8_t *msg, size_t len)
{
    uint32_t l = (uint32_t)(len + 1);
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

/* The Error message both peers get when the input ends before the job (a party left). */
static void peer_disconnected(void)
{
    uint8_t msg[128];
    size_t pos = 1;
    msg[0] = 0xee;
    put_prefixed(msg, &pos, "PEER_DISCONNECTED");
    put_prefixed(msg, &pos, "the enclave's input ended before the job did");
    write_frame(0, msg, pos);
    write_frame(1, msg, pos);
    fflush(stdout);
}

static int hex32(const char *s, uint8_t out[32])
{
    if (strlen(s) != 64)
        return 0;
    for (int i = 0; i < 32; i++)
        if (sscanf(s + 2 * i, "%2hhx", &out[i]) != 1)
            return 0;
    return 1;
}

int webmpc_host_verify_evidence(const uint8_t *evidence, size_t len, const uint8_t mrenclave[32],
                                const uint8_t report_data[32])
{
    static const oe_uuid_t format = {OE_FORMAT_UUID_SGX_ECDSA};
    oe_claim_t *claims = NULL;
    size_t n = 0;
    int unique_ok = 0, data_ok = 0;
    if (oe_verifier_initialize() != OE_OK)
        return WEBMPC_HOST_VERIFY_FAILED;
    if (oe_verify_evidence(&format, evidence, len, NULL, 0, NULL, 0, &claims, &n) != OE_OK)
        return WEBMPC_HOST_VERIFY_FAILED;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(claims[i].name, OE_CLAIM_UNIQUE_ID) == 0)
            unique_ok = claims[i].value_size == 32 && memcmp(claims[i].value, mrenclave, 32) == 0;
        if (strcmp(claims[i].name, OE_CLAIM_CUSTOM_CLAIMS_BUFFER) == 0)
            data_ok = claims[i].value_size == 32 && memcmp(claims[i].value, report_data, 32) == 0;
    }
    oe_free_claims(claims, n);
    if (!unique_ok)
        return WEBMPC_HOST_MEASUREMENT_MISMATCH;
    if (!data_ok)
        return WEBMPC_HOST_REPORT_DATA_MISMATCH;
    return WEBMPC_HOST_OK;
}

static int verify_main(int argc, char **argv)
{
    uint8_t m[32], rd[32], *buf;
    long len;
    FILE *f;
    if (argc != 5 || !hex32(argv[3], m) || !hex32(argv[4], rd) || !(f = fopen(argv[2], "rb")))
        return 2;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc(len > 0 ? (size_t)len : 1);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len)
        return 2;
    fclose(f);
    int rc = webmpc_host_verify_evidence(buf, (size_t)len, m, rd);
    printf("%s\n", rc == WEBMPC_HOST_OK ? "ok" : rc == WEBMPC_HOST_MEASUREMENT_MISMATCH ? "measurement-mismatch"
                                              : rc == WEBMPC_HOST_REPORT_DATA_MISMATCH ? "report-data-mismatch"
                                                                                       : "invalid");
    free(buf);
    return rc == WEBMPC_HOST_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    oe_enclave_t *enclave = NULL;
    uint32_t flags = 0, max_wires = 0;
    uint8_t *in, *out, to;
    size_t len;
    int ret = 0, status = 0, idle = 1;

    if (argc >= 2 && strcmp(argv[1], "--verify-evidence") == 0)
        return verify_main(argc, argv);
    if (argc < 2) {
        fprintf(stderr, "usage: webmpc_host ENCLAVE_PATH [--debug] [--max-wires N]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--debug") == 0)
            flags |= OE_ENCLAVE_FLAG_DEBUG;
        else if (strcmp(argv[i], "--max-wires") == 0 && i + 1 < argc)
            max_wires = (uint32_t)strtoul(argv[++i], NULL, 10);
        else
            return 2;
    }
    if (oe_create_webmpc_enclave(argv[1], OE_ENCLAVE_TYPE_AUTO, flags, NULL, 0, &enclave) != OE_OK) {
        fprintf(stderr, "webmpc_host: cannot create the enclave\n");
        return 2;
    }
    in = malloc(MAX_FRAME);
    out = malloc(OUT_CAP);
    if (!in || !out || ecall_start(enclave, &ret, max_wires) != OE_OK || ret != 0 ||
        ecall_evidence(enclave, &ret, out, OUT_CAP, &len) != OE_OK || ret != 0) {
        fprintf(stderr, "webmpc_host: the enclave did not start\n");
        return 2;
    }
    write_frame(0, out, len);
    write_frame(1, out, len);
    fflush(stdout);
    for (;;) {
        uint8_t hdr[4];
        uint32_t l;
        if (!read_exact(hdr, 4)) {
            /* The client closed its session: normal between jobs, a lost party mid-job. */
            if (!idle) {
                peer_disconnected();
                status = 2;
            }
            break;
        }
        l = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 | (uint32_t)hdr[3] << 24;
        if (l == 0 || l > MAX_FRAME || !read_exact(in, l) || in[0] > 1) {
            status = 2;
            break;
        }
        if (ecall_push(enclave, &ret, in[0], in + 1, l - 1) != OE_OK) {
            status = 2;
            break;
        }
        while (ecall_pull(enclave, &ret, &to, out, OUT_CAP, &len) == OE_OK && ret == 0)
            write_frame(to, out, len);
        fflush(stdout);
        /* One enclave instance is one attested session: jobs follow each other until the input
         * ends; a failed job ends the session. */
        if (ecall_status(enclave, &ret) != OE_OK || ret == 2) {
            status = 1;
            break;
        }
        idle = ret == 1;
    }
    oe_terminate_enclave(enclave);
    free(in);
    free(out);
    return status;
}
