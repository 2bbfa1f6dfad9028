"""Threema Gateway in end-to-end mode: the callback receiver, the reply sender and the blob fetcher.

`crypto` holds the NaCl boxes, the callback MAC and the padding; `messages` the plaintext formats; `gateway`
the HTTP client for the Gateway's API (public keys, send_e2e, blobs).
"""

CHANNEL = "threema"
