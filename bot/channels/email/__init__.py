"""The email channel: a signed webhook and an SMTP receiver in, replies through an SMTP relay out."""

CHANNEL = "email"
