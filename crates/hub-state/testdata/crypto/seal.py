#!/usr/bin/env python3
"""An independent implementation of the Hub CLI's password-encrypted state
format, written with the PyPI `cryptography` package, to cross-check
`crates/hub-state/src/crypto.rs`.

    seal.py seal PASSWORD PLAIN SEALED   gzip PLAIN, encrypt it, write SEALED
    seal.py open PASSWORD SEALED [PLAIN] decrypt SEALED, gunzip, print or write

Format: 0x26 0x01, an 8-byte salt, a 12-byte nonce, then AES-256-GCM of the
gzip of the YAML (tag last); key = PBKDF2-HMAC-SHA1(password, salt, 4096
rounds, 32 bytes); the salt is the associated data.
"""
import gzip
import os
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

MARKER = bytes([0x26, 0x01])
SALT_LEN = 8
NONCE_LEN = 12


def key(password: str, salt: bytes) -> bytes:
    kdf = PBKDF2HMAC(algorithm=hashes.SHA1(), length=32, salt=salt, iterations=4096)
    return kdf.derive(password.encode("utf-8"))


def seal(password: str, plain: bytes) -> bytes:
    salt = os.urandom(SALT_LEN)
    nonce = os.urandom(NONCE_LEN)
    body = AESGCM(key(password, salt)).encrypt(nonce, gzip.compress(plain), salt)
    return MARKER + salt + nonce + body


def unseal(password: str, sealed: bytes) -> bytes:
    if sealed[:2] != MARKER:
        raise SystemExit("not a password-encrypted state")
    salt = sealed[2 : 2 + SALT_LEN]
    nonce = sealed[2 + SALT_LEN : 2 + SALT_LEN + NONCE_LEN]
    body = sealed[2 + SALT_LEN + NONCE_LEN :]
    plain = AESGCM(key(password, salt)).decrypt(nonce, body, salt)
    return gzip.decompress(plain) if plain[:2] == b"\x1f\x8b" else plain


def main(argv):
    if len(argv) >= 4 and argv[1] == "seal":
        with open(argv[3], "rb") as f:
            sealed = seal(argv[2], f.read())
        with open(argv[4], "wb") as f:
            f.write(sealed)
    elif len(argv) >= 4 and argv[1] == "open":
        with open(argv[3], "rb") as f:
            plain = unseal(argv[2], f.read())
        if len(argv) > 4:
            with open(argv[4], "wb") as f:
                f.write(plain)
        else:
            sys.stdout.buffer.write(plain)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
