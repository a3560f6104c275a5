/* digest.c -- SHA-256 in hex, through OpenSSL. */
#include "digest.h"

#include <openssl/evp.h>

void fa_digest_sha256_hex(const void *data, size_t len, char out[FA_SHA256_HEX])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	/* EVP_Digest only fails on allocation or engine errors; a zero digest
	 * would then never match, which the chain check reports. */
	if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1)
		n = 0;
	for (unsigned int i = 0; i < 32; i++) {
		unsigned char b = i < n ? md[i] : 0;
		out[2 * i] = hex[b >> 4];
		out[2 * i + 1] = hex[b & 15];
	}
	out[64] = '\0';
}
