"""The sentences routes reply with, in English, German and Chinese. Numbers and dates in them come only from the
grounding and the tools' results, so a templated reply can never carry a number nobody computed."""

from __future__ import annotations

from datetime import datetime

_PHRASES: dict[str, dict[str, str]] = {
    "saved": {"en": "Saved: {what}.", "de": "Notiert: {what}.", "zh": "已记下：{what}。"},
    "saved_money": {
        "en": "Saved: {what}, {amount}.",
        "de": "Notiert: {what}, {amount}.",
        "zh": "已记下：{what}，{amount}。",
    },
    "ask_amount": {
        "en": "How much was it (and in which currency)?",
        "de": "Wie viel war es (und in welcher Währung)?",
        "zh": "花了多少钱？",
    },
    "ask_what_amount": {
        "en": "What did you pay for, and how much was it?",
        "de": "Wofür hast du bezahlt, und wie viel war es?",
        "zh": "是什么费用？花了多少钱？",
    },
    "ask_what_for": {
        "en": "What was the {amount} for?",
        "de": "Wofür waren die {amount}?",
        "zh": "这{amount}是什么费用？",
    },
    "ask_currency": {
        "en": "Which currency was {amount} in?",
        "de": "In welcher Währung waren {amount}?",
        "zh": "{amount} 是什么货币？",
    },
    "ask_when": {
        "en": "When should I remind {whom}?",
        "de": "Wann soll ich {whom} erinnern?",
        "zh": "什么时候提醒{whom}？",
    },
    "ask_what": {
        "en": "Sorry, what do you mean? Tell me a bit more and I'll take care of it.",
        "de": "Entschuldige, was meinst du genau? Erzähl mir etwas mehr, dann kümmere ich mich darum.",
        "zh": "不好意思，您指的是什么？请再具体说一下。",
    },
    "one_at_a_time": {
        "en": "I correct one entry at a time. Which one do you mean?",
        "de": "Ich korrigiere immer nur einen Eintrag. Welchen meinst du?",
        "zh": "我一次只能改一条记录。您指的是哪一条？",
    },
    "ask_which": {
        "en": "Which one do you mean?",
        "de": "Welchen Eintrag meinst du?",
        "zh": "您指的是哪一条？",
    },
    "reminder_set": {
        "en": "OK, I'll remind {whom} {when}: {text}",
        "de": "Okay, ich erinnere {whom} {when}: {text}",
        "zh": "好的，我会在{when}提醒{whom}：{text}",
    },
    "reminder_repeats": {
        "en": "OK, I'll remind {whom} {rule}, first {when}: {text}",
        "de": "Okay, ich erinnere {whom} {rule}, zuerst {when}: {text}",
        "zh": "好的，我会{rule}提醒{whom}，第一次在{when}：{text}",
    },
    "me": {"en": "you", "de": "dich", "zh": "您"},
    "household": {"en": "everyone", "de": "alle", "zh": "大家"},
    "cancelled": {"en": "Cancelled: {text}.", "de": "Abgesagt: {text}.", "zh": "已取消：{text}。"},
    "reminder_moved": {
        "en": "Moved: {text} — now {when}.",
        "de": "Verschoben: {text} — jetzt {when}.",
        "zh": "已改时间：{text}，现在是{when}。",
    },
    "ask_when_instead": {
        "en": "When should it remind you instead?",
        "de": "Wann soll ich stattdessen erinnern?",
        "zh": "改到什么时候提醒？",
    },
    "snoozed": {
        "en": "OK, I'll remind you again {when}: {text}",
        "de": "Okay, ich erinnere dich {when} noch einmal: {text}",
        "zh": "好的，我会在{when}再提醒您：{text}",
    },
    "done": {"en": "Marked as done: {text}.", "de": "Erledigt: {text}.", "zh": "已完成：{text}。"},
    "no_reminders": {
        "en": "You have no active reminders.",
        "de": "Du hast keine aktiven Erinnerungen.",
        "zh": "您目前没有提醒。",
    },
    "empty_list": {
        "en": "take every item off the {list} list",
        "de": "alle Einträge von der Liste {list} nehmen",
        "zh": "删除{list}清单上的所有项目",
    },
    "not_your_reminders": {
        "en": "I can only change your own reminders. {name}'s are {name}'s to change.",
        "de": "Ich kann nur deine eigenen Erinnerungen ändern. Die von {name} kann nur {name} ändern.",
        "zh": "我只能修改您自己的提醒。{name}的提醒只有{name}本人可以修改。",
    },
    "reminders": {"en": "Your reminders:", "de": "Deine Erinnerungen:", "zh": "您的提醒："},
    "updated": {"en": "Updated: {what}.", "de": "Geändert: {what}.", "zh": "已更新：{what}。"},
    "forgotten": {
        "en": 'Forgotten: {what}. Say "undo" if that was a mistake.',
        "de": 'Vergessen: {what}. Sag "rückgängig", falls das ein Fehler war.',
        "zh": "已删除：{what}。如果删错了，请说“撤销”。",
    },
    "restored": {"en": "Restored: {what}.", "de": "Wiederhergestellt: {what}.", "zh": "已恢复：{what}。"},
    "undone": {"en": "Undone: {what}.", "de": "Rückgängig gemacht: {what}.", "zh": "已撤销：{what}。"},
    "nothing_to_undo": {
        "en": "There is nothing I can undo right now.",
        "de": "Da gibt es gerade nichts rückgängig zu machen.",
        "zh": "目前没有可以撤销的操作。",
    },
    "not_found": {
        "en": "I couldn't find anything about that in your notes.",
        "de": "Dazu habe ich in euren Notizen nichts gefunden.",
        "zh": "我在记录里没有找到相关内容。",
    },
    "from_notes": {"en": "From your notes: {notes}", "de": "Laut euren Notizen: {notes}", "zh": "根据记录：{notes}"},
    "no_records": {
        "en": "I found no matching entries{span}.",
        "de": "Ich habe keine passenden Einträge gefunden{span}.",
        "zh": "{span}没有找到相关记录。",
    },
    "confirm": {
        "en": "Before I do that — {what}. Shall I go ahead?",
        "de": "Bevor ich das mache — {what}. Soll ich?",
        "zh": "在执行之前确认一下：{what}。要继续吗？",
    },
    "saved_event": {
        "en": "Saved: {what}. In the calendar {when}.",
        "de": "Notiert: {what}. Im Kalender {when}.",
        "zh": "已记下：{what}。已加入日历：{when}。",
    },
    "events": {"en": "In the calendar:", "de": "Im Kalender:", "zh": "日历中的安排："},
    "no_events": {
        "en": "Nothing in the calendar from {first} to {last}.",
        "de": "Von {first} bis {last} steht nichts im Kalender.",
        "zh": "{first} 到 {last} 日历中没有安排。",
    },
    "no_upcoming_events": {
        "en": "I found no upcoming event in the calendar to remind you of.",
        "de": "Im Kalender steht kein kommender Termin, an den ich erinnern könnte.",
        "zh": "日历中没有即将到来的安排可以提醒。",
    },
    "event_reminder_set": {
        "en": "OK, I'll remind {whom} {when}, {minutes} minutes before: {text}",
        "de": "Okay, ich erinnere {whom} {when}, {minutes} Minuten vorher: {text}",
        "zh": "好的，我会在{when}（提前{minutes}分钟）提醒{whom}：{text}",
    },
    "event_moved": {
        "en": "Moved: {text}, now {when}.",
        "de": "Verschoben: {text}, jetzt {when}.",
        "zh": "已改期：{text}，现在是{when}。",
    },
    "event_cancelled": {
        "en": "Cancelled: {text} (and the reminders set for it).",
        "de": "Abgesagt: {text} (samt den Erinnerungen dafür).",
        "zh": "已取消：{text}（以及为它设的提醒）。",
    },
    "forget_me": {
        "en": "forget everything about you: your private notes, reminders, sign-ins and chat links; your household "
        "entries stay as a former member's. This cannot be undone",
        "de": "alles über dich vergessen: deine privaten Notizen, Erinnerungen, Anmeldungen und Chat-Verknüpfungen; "
        "deine Einträge im Haushalt bleiben als die eines ehemaligen Mitglieds. Das lässt sich nicht rückgängig machen",
        "zh": "忘记关于您的一切：您的私人记录、提醒、登录和聊天绑定；"
        "您在家庭中的条目保留，作者显示为前成员。此操作无法撤销",
    },
    "forgot_me": {
        "en": "Done: I forgot everything about you. Goodbye!",
        "de": "Erledigt: Ich habe alles über dich vergessen. Auf Wiedersehen!",
        "zh": "已完成：关于您的一切都已忘记。再见！",
    },
    "yes": {"en": "Yes", "de": "Ja", "zh": "是"},
    "no": {"en": "No", "de": "Nein", "zh": "不"},
    "left_alone": {
        "en": "OK, I left everything as it was.",
        "de": "Okay, ich habe nichts verändert.",
        "zh": "好的，我什么都没有改动。",
    },
    "greeting": {"en": "Hello! How can I help?", "de": "Hallo! Wie kann ich helfen?", "zh": "您好！有什么可以帮您？"},
    "thanks": {"en": "You're welcome!", "de": "Gern geschehen!", "zh": "不客气！"},
    "own_rules": {
        "en": "My own instructions stay with me, but I'm glad to help: I can keep your expenses, notes, plans and "
        "lists, answer questions about them and set reminders.",
        "de": "Meine eigenen Anweisungen behalte ich für mich, aber ich helfe gern: Ich merke mir Ausgaben, Notizen, "
        "Termine und Listen, beantworte Fragen dazu und erinnere euch.",
        "zh": "我自己的设定不便透露，但很乐意帮忙：我可以记录开支、笔记、安排和清单，回答相关问题，还能设置提醒。",
    },
    "kept_home": {
        "en": "What your family tells me stays with your family: I don't send it anywhere, and I can't show anyone "
        "else's.",
        "de": "Was ihr mir erzählt, bleibt bei eurer Familie: Ich schicke es nirgendwohin und zeige keine Daten "
        "anderer Familien.",
        "zh": "你们家告诉我的信息只留在你们家：我不会把它发给任何人，也看不到其他家庭的数据。",
    },
    "failed": {
        "en": "Sorry, I couldn't do that: {reason}",
        "de": "Das hat leider nicht geklappt: {reason}",
        "zh": "抱歉，没能完成：{reason}",
    },
}

_WEEKDAYS = {
    "en": ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"),
    "de": ("Mo", "Di", "Mi", "Do", "Fr", "Sa", "So"),
    "zh": ("周一", "周二", "周三", "周四", "周五", "周六", "周日"),
}


def say(key: str, language: str, **values: object) -> str:
    texts = _PHRASES[key]
    return texts.get(language, texts["en"]).format(**values)


def when_text(at: datetime, language: str, *, with_time: bool = True) -> str:
    """A moment as a member reads it: "on Tue 2026-11-24 at 08:00", "am Di 2026-11-24 um 08:00",
    "周二 2026-11-24 08:00"."""
    weekday = _WEEKDAYS.get(language, _WEEKDAYS["en"])[at.weekday()]
    day = at.strftime("%Y-%m-%d")
    clock = at.strftime("%H:%M")
    if language == "zh":
        return f"{weekday} {day} {clock}" if with_time else f"{weekday} {day}"
    if language == "de":
        return f"am {weekday} {day} um {clock}" if with_time else f"am {weekday} {day}"
    return f"on {weekday} {day} at {clock}" if with_time else f"on {weekday} {day}"
