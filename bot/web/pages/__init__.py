"""The family's web app at `/`: server-rendered pages (Jinja2 templates in `templates/`, small plain JS modules in
`static/`) for chat, memories, reminders, money and the household, behind cookie sessions.

`routes.py` lists every route; `security.py` resolves the session, checks CSRF and sets the security headers;
each page module reads through the member's household transaction (row-level security), as the API does.
"""
