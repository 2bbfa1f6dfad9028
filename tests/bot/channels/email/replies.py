"""Replies to FAA as real mail clients write them, in their own languages: the plain-text body each client sends,
the header that names the client, and what the member wrote now (everything else is quoted history).

The attribution lines are the clients' own formats: Gmail (web and Android) in eleven languages, Apple Mail on
macOS and iOS, Thunderbird, K-9 Mail, Outlook (desktop, web, mobile), Yahoo, Yandex, Mail.ru and QQ Mail.
Top-posted replies, replies written below the quote, and inline answers between quoted blocks.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reply:
    client: str
    agent: str  # the X-Mailer / User-Agent the client sends
    body: str
    new: str  # what the member wrote in this message


ASKED = "How much did you spend at the bakery?"

REPLIES = [
    Reply(
        "gmail-en-top",
        "",
        "12 euros, and 3 for the coffee\n\n"
        "On Wed, Apr 3, 2024 at 10:15 AM FAA <faa@family.example> wrote:\n\n"
        f"> {ASKED}\n>\n",
        "12 euros, and 3 for the coffee",
    ),
    Reply(
        "gmail-en-wrapped",
        "",
        "12 euros\n\nOn Wed, Apr 3, 2024 at 10:15 AM Family Assistant (FAA) <\nfaa@family.example> wrote:\n\n"
        f"> {ASKED}\n",
        "12 euros",
    ),
    Reply(
        "gmail-en-bottom",
        "",
        "On Wed, Apr 3, 2024 at 10:15 AM FAA <faa@family.example>\nwrote:\n\n"
        f"> {ASKED}\n>\n\n12 euros at Müller's bakery\n",
        "12 euros at Müller's bakery",
    ),
    Reply(
        "gmail-fr",
        "",
        "12 euros à la boulangerie\n\n"
        "Le mer. 3 avr. 2024 à 10:15, FAA <faa@family.example> a écrit :\n\n"
        "> Combien as-tu dépensé à la boulangerie ?\n",
        "12 euros à la boulangerie",
    ),
    Reply(
        "gmail-de-mobile",
        "",
        "12 Euro beim Bäcker\n\n"
        "FAA <faa@family.example> schrieb am Mi., 3. Apr. 2024, 10:15:\n\n"
        "> Wie viel hast du beim Bäcker ausgegeben?\n",
        "12 Euro beim Bäcker",
    ),
    Reply(
        "gmail-es",
        "",
        "12 euros en la panadería\n\n"
        "El mié, 3 abr 2024 a las 10:15, FAA (<faa@family.example>) escribió:\n\n"
        "> ¿Cuánto gastaste en la panadería?\n",
        "12 euros en la panadería",
    ),
    Reply(
        "gmail-it",
        "",
        "12 euro dal panettiere\n\n"
        "Il giorno mer 3 apr 2024 alle ore 10:15 FAA <faa@family.example> ha\nscritto:\n\n"
        "> Quanto hai speso dal panettiere?\n",
        "12 euro dal panettiere",
    ),
    Reply(
        "gmail-pt",
        "",
        "12 euros na padaria\n\n"
        "Em qua., 3 de abr. de 2024 às 10:15, FAA <faa@family.example>\nescreveu:\n\n"
        "> Quanto você gastou na padaria?\n",
        "12 euros na padaria",
    ),
    Reply(
        "gmail-nl",
        "",
        "12 euro bij de bakker\n\n"
        "Op wo 3 apr 2024 om 10:15 schreef FAA <faa@family.example>:\n\n"
        "> Hoeveel heb je bij de bakker uitgegeven?\n",
        "12 euro bij de bakker",
    ),
    Reply(
        "gmail-sv",
        "",
        "12 euro på bageriet\n\n"
        "Den ons 3 apr. 2024 kl 10:15 skrev FAA <faa@family.example>:\n\n"
        "> Hur mycket handlade du för på bageriet?\n",
        "12 euro på bageriet",
    ),
    Reply(
        "gmail-pl",
        "",
        "12 euro w piekarni\n\n"
        "śr., 3 kwi 2024 o 10:15 FAA <faa@family.example> napisał(a):\n\n"
        "> Ile wydałeś w piekarni?\n",
        "12 euro w piekarni",
    ),
    Reply(
        "gmail-ru",
        "",
        "12 евро в пекарне\n\n"
        "ср, 3 апр. 2024 г. в 10:15, FAA <faa@family.example>:\n\n"
        "> Сколько ты потратил в пекарне?\n",
        "12 евро в пекарне",
    ),
    Reply(
        "gmail-ru-android",
        "",
        '12 евро\n\n02.04.2012 14:20 пользователь "FAA" <faa@family.example> написал:\n\n'
        "> Сколько ты потратил в пекарне?\n",
        "12 евро",
    ),
    Reply(
        "gmail-ru-android-wrapped",
        "",
        '12 евро\n\n02.04.2012 14:20 пользователь "faa@family.example" <faa@family.example>\nнаписал:\n\n'
        "> Сколько ты потратил в пекарне?\n",
        "12 евро",
    ),
    Reply(
        "gmail-ru-android-wrapped-address",
        "",
        '12 евро\n\n02.04.2012 14:20 пользователь "faa@family.example" <\nfaa@family.example> написал:\n\n'
        "> Сколько ты потратил в пекарне?\n",
        "12 евро",
    ),
    Reply(
        "gmail-ru-android-wrapped-unquoted",
        "",
        '12 евро\n\n02.04.2012 14:20 пользователь "faa@family.example" <faa@family.example>\nнаписал:\n\n'
        "Сколько ты потратил в пекарне?\n",
        "12 евро",
    ),
    Reply(
        "gmail-zh",
        "",
        "面包店花了12欧元\n\nFAA <faa@family.example> 于2024年4月3日周三 10:15写道：\n\n> 你在面包店花了多少钱？\n",
        "面包店花了12欧元",
    ),
    Reply(
        "gmail-ja",
        "",
        "パン屋で12ユーロ\n\n2024年4月3日(水) 10:15 FAA <faa@family.example>:\n\n> パン屋でいくら使いましたか？\n",
        "パン屋で12ユーロ",
    ),
    Reply(
        "gmail-ko",
        "",
        "빵집에서 12유로\n\n2024년 4월 3일 (수) 오전 10:15, FAA <faa@family.example>님이 작성:\n\n"
        "> 빵집에서 얼마를 썼나요?\n",
        "빵집에서 12유로",
    ),
    Reply(
        "apple-mail-en",
        "Apple Mail (2.3774.500.171.1.1)",
        f"12 euros\n\n> On 3 Apr 2024, at 10:15, FAA <faa@family.example> wrote:\n> \n> {ASKED}\n> \n",
        "12 euros",
    ),
    Reply(
        "apple-mail-zh",
        "Apple Mail (2.3774.500.171.1.1)",
        "面包店12欧元\n\n在 2024年4月3日 周三 10:15，FAA <faa@family.example> 写道：\n\n> 你在面包店花了多少钱？\n",
        "面包店12欧元",
    ),
    Reply(
        "apple-mail-de-bottom",
        "Apple Mail (2.3774.500.171.1.1)",
        "> Am 03.04.2024 um 10:15 schrieb FAA <faa@family.example>:\n> \n> Wie viel hast du beim Bäcker ausgegeben?\n"
        "\n12 Euro, und 3 Euro für Kaffee.\n\nGrüße\nKlaus\n",
        "12 Euro, und 3 Euro für Kaffee.\n\nGrüße\nKlaus",
    ),
    Reply(
        "iphone-de",
        "iPhone Mail (21E236)",
        "12 Euro\n\nVon meinem iPhone gesendet\n\n"
        "> Am 03.04.2024 um 10:15 schrieb FAA <faa@family.example>:\n> \n> \ufeffWie viel?\n",
        "12 Euro",
    ),
    Reply(
        "thunderbird-en-bottom",
        "Mozilla Thunderbird",
        f"On 03.04.24 10:15, FAA wrote:\n> {ASKED}\n\n12 euros for bread and rolls.\n\n-- \nBen Miller\n",
        "12 euros for bread and rolls.",
    ),
    Reply(
        "thunderbird-de-inline",
        "Mozilla Thunderbird",
        "Am 03.04.24 um 10:15 schrieb FAA:\n> Wie viel hast du ausgegeben?\n\n20 Euro.\n\n"
        "> Und wo?\n\nBeim Bäcker am Markt.\n\n> Für wen?\n\nFür uns alle.\n",
        "20 Euro.\n\nBeim Bäcker am Markt.\n\nFür uns alle.",
    ),
    Reply(
        "thunderbird-fr-top",
        "Mozilla Thunderbird",
        "Oui, 12 euros.\n\nLe 03/04/2024 à 10:15, FAA a écrit :\n> Combien ?\n",
        "Oui, 12 euros.",
    ),
    Reply(
        "k9-de",
        "K-9 Mail for Android",
        "12 Euro\n-- \nDiese Nachricht wurde von meinem Android-Gerät mit K-9 Mail gesendet.\n\n"
        "Am 3. April 2024 10:15:33 MESZ schrieb FAA <faa@family.example>:\n>Wie viel?\n",
        "12 Euro",
    ),
    Reply(
        "k9-en",
        "K-9 Mail for Android",
        "Paid.\n\nOn April 3, 2024 10:15:33 AM GMT+02:00, FAA <faa@family.example> wrote:\n>How much?\n",
        "Paid.",
    ),
    Reply(
        "outlook-desktop-en",
        "Microsoft Outlook 16.0",
        "12 euros\n\nBest regards\nBen\n\n-----Original Message-----\nFrom: FAA <faa@family.example>\n"
        f"Sent: Wednesday, April 3, 2024 10:15 AM\nTo: Ben Miller <ben@outlook.com>\nSubject: Bakery\n\n{ASKED}\n",
        "12 euros\n\nBest regards\nBen",
    ),
    Reply(
        "outlook-web-en",
        "",
        "12 euros\n\n________________________________\nFrom: FAA <faa@family.example>\n"
        f"Sent: Wednesday, April 3, 2024 10:15\nTo: ben@outlook.com <ben@outlook.com>\nSubject: Bakery\n\n{ASKED}\n",
        "12 euros",
    ),
    Reply(
        "outlook-de",
        "Microsoft Outlook 16.0",
        "12 Euro\n\nVon: FAA <faa@family.example>\nGesendet: Mittwoch, 3. April 2024 10:15\nAn: Klaus <klaus@web.de>\n"
        "Betreff: Bäcker\n\nWie viel hast du beim Bäcker ausgegeben?\n",
        "12 Euro",
    ),
    Reply(
        "outlook-fr",
        "Microsoft Outlook 16.0",
        "12 euros\n\nDe : FAA <faa@family.example>\nEnvoyé : mercredi 3 avril 2024 10:15\nÀ : Léa <lea@orange.fr>\n"
        "Objet : Boulangerie\n\nCombien ?\n",
        "12 euros",
    ),
    Reply(
        "outlook-mobile",
        "",
        "12 euros\n\nGet Outlook for Android\n________________________________\nFrom: FAA <faa@family.example>\n"
        f"Sent: Wednesday, April 3, 2024 10:15:00 AM\nTo: ben@outlook.com\nSubject: Bakery\n\n{ASKED}\n",
        "12 euros",
    ),
    Reply(
        "yahoo",
        "",
        f"12 euros\n\nOn Wednesday, April 3, 2024 at 10:15:00 AM GMT+2, FAA <faa@family.example> wrote:\n\n{ASKED}\n",
        "12 euros",
    ),
    Reply(
        "yandex",
        "Yandex.Mail",
        "12 евро\n\n-- \nОтправлено из мобильной Яндекс Почты\n\n"
        '03.04.2024, 10:15, "FAA" <faa@family.example>:\n> Сколько ты потратил в пекарне?\n',
        "12 евро",
    ),
    Reply(
        "mail-ru",
        "",
        "12 евро\n\n>Среда, 3 апреля 2024, 10:15 +03:00 от FAA <faa@family.example>:\n>\n>Сколько?\n",
        "12 евро",
    ),
    Reply(
        "qq-mail",
        "",
        "好的，12欧元\n\n\n------------------&nbsp;原始邮件&nbsp;------------------\n"
        '发件人: "FAA"<faa@family.example>;\n发送时间: 2024年4月3日(星期三) 上午10:15\n'
        '收件人: "李娜"<li.na@qq.com>;\n主题: 面包店\n\n你在面包店花了多少钱？\n'.replace("&nbsp;", " "),
        "好的，12欧元",
    ),
    Reply(
        "foxmail",
        "Foxmail 7.2.25.228[cn]",
        "12欧元\n\n\n\nli.na@qq.com\n\n发件人： FAA\n发送时间： 2024-04-03 10:15\n收件人： li.na@qq.com\n"
        "主题： 面包店\n你在面包店花了多少钱？\n",
        "12欧元\n\nli.na@qq.com",
    ),
]

# Text that only looks like history: it is the member's and stays.
NOT_HISTORY = [
    "On Monday I paid the rent.\nOn Tuesday the gas bill.",
    "Tom wrote:\n- milk\n- eggs",
    "Am Montag 20 Euro für Brot.\nAm Dienstag schrieb Anna die Liste.",
    "Meeting notes from: 10:15 <anna@school.example>: bring boots",
]
