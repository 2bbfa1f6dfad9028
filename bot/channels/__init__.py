"""The channels members reach FAA through: Telegram, Threema, email, the web API and the terminal chat, one
subpackage each, each with a `Channel` (`channel.py`) listed in `registry.py`. Shared by all of them: the gate a
verified chat message passes (`gate.py`), the way into inbox and queue (`intake.py`), numbered quick replies
(`numbered.py`), live delivery over Redis (`live.py`) and stored media for senders (`media.py`)."""
