"""The terminal chat (`faa chat`): an operator types as a member, through the same inbox, queue and outbox as every
other channel; the reply comes back live over Redis."""

CHANNEL = "terminal"
