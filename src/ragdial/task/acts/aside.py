"""Asides and travel words: whether a clause talks about something besides the trip."""

from __future__ import annotations

import datetime as dt
import re

from ragdial.jsontypes import JSONDict
from ragdial.task.acts.finders import _domain_named, parse
from ragdial.task.acts.words import BERTH_WORDS, CLASS_WORDS, KIND_WORDS, PERIOD_WORDS
from ragdial.task.db import Gazetteer
from ragdial.task.slots import _BY_SOUND, LUNAR_DAYS, NAMED_DAYS, NUM, _find, _short_airports, canonical


def _travel_request(text: str) -> bool:
    return bool(re.search(r"(帮我(订|查|看|找)|我要订|我想订|订票|订张|买张|机票|火车票|车票|航班|酒店)", text))


# words a travel request is made of (besides names, dates, times, numbers, classes): what is left of a clause
# after removing them is the rest of what it talks about; a clause that says something else is an aside
TRAVEL_WORDS = re.compile(
    r"(帮我|给我|麻烦|请|我们|我|咱们|想要|想|要|需要|打算|准备|得|订|预订|预定|买|查|找|看看|看下|看一下|搜|安排|"
    r"出发|出行|走|回来|回去|回|返回|去|到|飞往|飞|抵达|从|经|坐|乘|搭|住宿|入住|退房|住|待|晚上|晚|间|房|床|"
    r"大床|双床|标间|单间|张|票|机票|火车|高铁|动车|车票|车次|航班|班机|飞机|酒店|宾馆|旅馆|座|铺|舱|等|位|人|个|"
    r"出差|旅游|旅行|玩|探亲|回家|过去|过来|那边|这边|附近|周边|市区|区|一下|一点|一些|些|点|分|半|钟|左右|以后|之后|"
    r"以前|之前|前|后|以内|之内|内|以上|以下|以下|之间|到|至|最好|最|便宜|实惠|贵|早|快|好|舒服|靠窗|靠过道|"
    r"直飞|直达|中转|经停|往返|单程|返程|回程|多少|几|什么|哪|有没有|有|没有|还有|能|可以|行|就|也|还|再|都|改|换|成|"
    r"变|调|提前|推迟|延后|是|在|的|了|吧|呢|啊|呀|吗|嘛|哦|哈|嗯|额|呃|那|这|个|一|两|和|跟|或者|或|还是|不|别|"
    r"元|块|钱|预算|价格|价位|以内|不超过|超过|不高于|低于|控制|放宽|提高|降到|降低|加到|涨到|大概|差不多|尽量|随便|都行|均可|可|"
    r"日期|时间|时候|开始|结束|上车|下车|落地|降落|起飞|发车|到达|站|机场|航空|公司|星级|星|级|档次|总共|一共|加|减|"
    r"车|趟|班|家|那家|这家|同一|一样|算了|不用|不要|只要|行程|计划|全部|都要|谁|对|错|说|改为|太少|太多|少|多|"
    r"太贵|太慢|太早|太晚|太远|太差|没关系|无所谓|直接|反正|下单|确定|确认|没问题|吧)"
)
HOLIDAYS = "|".join(sorted((w for w in (*NAMED_DAYS, *LUNAR_DAYS) if not w.isascii()), key=len, reverse=True))
# travel words of two or more characters, also matched by sound when the residue of a clause is computed
# (该道7号 heard for 改到7号 says nothing else)
TRAVEL_PHRASES = [
    "改到", "改成", "换到", "换成", "改为", "帮我", "看看", "看下", "那个", "这个", "那班", "这班", "那趟", "这趟",
    "那家", "这家", "出发", "回来", "酒店", "宾馆", "机票", "车票", "火车", "高铁", "动车", "航班", "飞机", "订票",
    "预订", "住宿", "入住", "退房", "今天", "明天", "后天", "周末", "晚上", "上午", "下午", "早上", "中午", "以内",
    "以后", "以前", "左右", "就行", "可以", "要求", "预算",
]  # fmt: skip
DATE_WORDS = re.compile(
    rf"({HOLIDAYS}|节|大后天|后天|明天|今天|今晚|明晚|明早|明儿|今儿|当天|同一天|同天|那天|那一天|第二天|次日|隔天|(下下|下|这|本)?(个)?(周|星期|礼拜)[一二三四五六日天末1-7]?|"
    rf"({NUM})\s*月\s*({NUM})\s*[日号]?|({NUM})\s*[号日]|({NUM})\s*[点:：]\s*({NUM})?|"
    r"凌晨|早上|上午|中午|下午|傍晚|晚上|夜里|半夜|早班|晚班|清早|一大早)"
)
# slots an aside may name in passing; a clause naming a class, berth, stars, district … talks about travel
INCIDENTAL = {
    "date", "period", "time_from", "time_to", "dep_city", "arr_city", "city", "dep_place", "arr_place",
    "max_price", "passengers", "guests", "check_out",
}  # fmt: skip
# an aside that says something about the speaker, the past or the world, with a date/time/city in it: forms that
# are asides whatever else the clause names, then topics that are asides unless the clause names a trip
ASIDE_FORM = re.compile(
    r"(^我(现在|人)?(住)?在[^的]{1,6}$|^(我|我们)?(家|公司|单位|老家|学校)(在|就在)|^(我|我们)(家|老家)|"
    r"离.{1,6}(挺|很|不|比较)?(近|远)|上礼拜|上星期|(是|是不是)\s*(几号|周几|星期几|礼拜几|几月几号|什么日子)|"
    r"(今天|明天|后天|这周.|下周.|周.|[号日])\s*是\s*(不是)?\s*(周|星期|礼拜|[0-9一二两三四五六七八九十]+\s*[月号日])|"
    r"上次|上回|那次|延误了|what (date|day)|is it today|几个周末|[0-9一二两三四五六七八九十几]\s*年|"
    r"[号日天]\s*是\s*.{0,2}几\s*[？?]?$|充\s*\d+|充.{0,3}(块|元)|"
    rf"[号日天]\s*(就)?是\s*(不是)?\s*({HOLIDAYS})(吧|吗|嘛|啊|呀|么)|(还有|还剩|有)\s*几天|隔\s*几天)"
)
ASIDE = re.compile(
    r"(心情|好累|累死|烦死|困死|加班|开会|有个会|体检|考试|面试|上班|上课|放学|睡懒觉|演唱会|步数|停运|号线|"
    r"刮.{0,2}风|带伞|雪|收了|收盘|涨到|跌到|黄金|值得|零下|[0-9一二两三四五六七八九十]\s*度|"
    r"几岁|生日|纪念日|结婚|下班了|到家了|起床|吃饭|午饭|晚饭|早饭|行李|箱子|托运|宠物|充电|餐车|wifi|安检|值机|好冷|好热|冷死|热死)"
)


def _aside(text: str, gaz: Gazetteer, incidental: bool = True) -> bool:
    """Whether a clause that names a date, time, city or number is an aside, not a constraint: a form that is
    always an aside (我在武汉 / 明天是周三吧 / 上次…), a topic that is not travel in a clause naming no trip
    (我后天要开会, but 我后天去上海开会 is a trip), or, with no travel verb, domain or route in it, words left
    after the names, dates, numbers and travel words are taken away (我下周一要去体检)."""
    lower = text.lower()
    if ASIDE_FORM.search(lower):
        return True
    heard = re.fullmatch(r"我(?:现在|人)?(?:住)?再(.{2,4}?)(?:呢|啊|呀)?", text)  # 我再武汉: 我在武汉 misheard
    if heard and heard.group(1) in gaz.cities:
        return True
    if any(role for _c, role in parse(text, gaz, dt.date(2026, 12, 1)).cities):
        return False
    return bool(ASIDE.search(lower)) or (incidental and _says_else(text, gaz))


def _says_else(text: str, gaz: Gazetteer, least: int = 2) -> bool:
    """Whether a clause with no travel verb, domain or route leaves words after names, dates, numbers and travel
    words are taken away (刚开完会 / 我下周一要去体检)."""
    if (
        _travel_request(text)
        or _domain_named(text, False)
        or re.search(r"(从.{1,8}(到|去|飞|回)|(到|飞|去|回)$)", text)
    ):
        return False
    brands = {b for brand in gaz.brands for b in (brand, brand.replace("酒店", "").replace("快捷", ""))}
    names = {*gaz.cities, *gaz.places, *gaz.districts, *brands, *(gaz.airlines or ()), *{b[:2] for b in brands}}
    names |= set(_short_airports(gaz))
    vocab = [n for n in names if len(n) >= 2] + [*CLASS_WORDS, *BERTH_WORDS, *KIND_WORDS, *PERIOD_WORDS]
    vocab += TRAVEL_PHRASES
    chars = list(text)
    for start, end, _word in _find(text, vocab, fuzzy=_BY_SOUND.get()):  # names heard by sound too (被竞 = 北京)
        chars[start:end] = " " * (end - start)
    rest = "".join(chars)
    rest = DATE_WORDS.sub(" ", canonical(rest))  # (cue words heard by sound too: 后田 = 后天)
    rest = re.sub(rf"{NUM}", " ", rest)
    rest = TRAVEL_WORDS.sub(" ", rest)
    return bool(re.search(rf"[\u4e00-\u9fff]{{{least},}}", rest))


def _booking_domain(text: str) -> JSONDict:
    if re.search(r"(机票|航班|飞机|\bflights?\b|\bplane\b)", text, re.I):
        return {"domain": "flight"}
    if re.search(r"(火车|高铁|动车|车票|的车|车来着|卧铺|\btrains?\b)", text, re.I):
        return {"domain": "train"}
    if re.search(r"(酒店|宾馆|房间|\bhotels?\b|\brooms?\b)", text, re.I):
        return {"domain": "hotel"}
    return {}


def _has_constraints(text: str, gaz: Gazetteer, english: bool) -> bool:
    p = parse(text, gaz, dt.date(2026, 12, 1))
    return bool(p.cities or p.date or p.seat_class or p.berths or _domain_named(text, english))
