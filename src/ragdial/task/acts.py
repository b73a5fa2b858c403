"""Dialog acts before slots: what a user turn does (inform, request, confirm, deny, select, modify,
ask_about_booking, out_of_scope, greeting, thanks), in the order it is said, each with its normalised slots.

``understand(text, context, gazetteer, today)`` reads one user turn in the context the system left it in
(``Context``: the task under way, the open question, the offers listed, the known slots, the bookings made, a
suggestion). The slot conventions are those of ``benchmarks/data/README_task_utterances.md`` (ISO dates, named
time windows, canonical cities and places, class synonyms, reference slots for choosing an offer), so the
locked utterance bank scores this module directly (``benchmarks/task_nlu.py``).

An utterance is cut into clauses (punctuation, spaces between Chinese words, connectives such as 然后/顺便/对了);
each clause gets one act from cue words checked in a fixed order (greeting, thanks, booking question, out of
scope, attribute question, deny, confirm, choice of an offer, constraints); neighbouring clauses with the same act
are joined. Out-of-scope clauses never carry slots, whatever cities, dates or numbers they name.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ragdial.jsontypes import JSONDict, JSONObject, JSONValue, as_array, as_object, as_text_or_none
from ragdial.task.db import Gazetteer
from ragdial.task.slots import _BY_SOUND, NUM, SEAT_CLASSES, Parse, _find, canonical, cn_number, parse_date
from ragdial.task.slots import parse as parse_slots
from ragdial.task.values import as_int, as_str, items, text_or_none


def parse(text: str, gaz: Gazetteer, today: dt.date) -> Parse:
    """The slot parser, matching by sound as the current ``understand`` call says."""
    return parse_slots(text, gaz, today, _BY_SOUND.get())


ACTS = (
    "inform",
    "request",
    "confirm",
    "deny",
    "select",
    "modify",
    "ask_about_booking",
    "cancel_booking",
    "change_booking",
    "out_of_scope",
    "greeting",
    "thanks",
)
REQUESTABLE = (
    "price",
    "dep_time",
    "arr_time",
    "duration",
    "seats_left",
    "rooms_left",
    "dep_place",
    "arr_place",
    "stars",
    "district",
    "airline",
    "seat_class",
    "berth",
    "availability",  # 一班都没有吗？ after nothing matched: whether there really is none
)
REFERENCE: tuple[str, ...] = (
    "ordinal",
    "code",
    "brand",
    "district",
    "price",
    "dep_time",
    "airline",
    "seat_class",
    "berth",
)
REFERENCE += ("feature", "ref")
PERIOD_NAMES = ("凌晨", "早上", "上午", "中午", "下午", "傍晚", "晚上")
WINDOWS = {
    "凌晨": ("00:00", "06:00"),
    "早上": ("06:00", "09:00"),
    "上午": ("06:00", "12:00"),
    "中午": ("11:00", "14:00"),
    "下午": ("12:00", "18:00"),
    "傍晚": ("17:00", "19:00"),
    "晚上": ("18:00", "24:00"),
}
PERIOD_WORDS = {  # said -> named window (longest first when matching)
    "早班机": "早上",
    "早班车": "早上",
    "早班": "早上",
    "一大早": "早上",
    "最早的": "早上",
    "越早越好": "早上",
    "清早": "早上",
    "早晨": "早上",
    "早上": "早上",
    "明早": "早上",
    "凌晨": "凌晨",
    "半夜": "凌晨",
    "上午": "上午",
    "中午": "中午",
    "午饭前后": "中午",
    "下午": "下午",
    "傍晚": "傍晚",
    "下班以后": "傍晚",
    "下班后": "傍晚",
    "晚班": "晚上",
    "晚上": "晚上",
    "夜里": "晚上",
    "明晚": "晚上",
    "今晚": "晚上",
}
PERIOD_EN = {
    "early morning": "早上",
    "early": "早上",
    "morning": "上午",
    "afternoon": "下午",
    "evening": "晚上",
    "tonight": "晚上",
    "night": "晚上",
    "noon": "中午",
}
CLASS_WORDS = {**SEAT_CLASSES, "公务舱": "商务舱", "卧铺": "卧铺"}  # the slot parser's classes and two synonyms
CLASS_EN = {
    "economy": "经济舱",
    "business class": "business",
    "business": "business",
    "first class": "first",
    "second class": "二等座",
    "hard seat": "硬座",
    "hard sleeper": "硬卧",
    "soft sleeper": "软卧",
}
SLEEPERS = ["硬卧", "软卧"]
NEGATED_CLASS = re.compile(
    r"(不要|不是|别|不想要|不想坐|不想|不坐|不用|除了)\s*(经济舱|商务舱|头等舱|公务舱|二等座|一等座|商务座|硬座|硬卧|软卧|卧铺)"
)
BERTH_WORDS = {"上铺": "上铺", "中铺": "中铺", "下铺": "下铺"}
KIND_WORDS = {
    "高铁": ["G"],
    "G字头": ["G"],
    "动车": ["D"],
    "普快": ["K", "T", "Z"],
    "绿皮车": ["K", "T", "Z"],
    "绿皮": ["K", "T", "Z"],
}
AIRLINES_EN = {
    "air china": "国航",
    "china eastern": "东航",
    "china southern": "南航",
    "hainan airlines": "海航",
    "sichuan airlines": "川航",
    "shenzhen airlines": "深航",
}
CITY_NICKNAMES = {"京城": "北京", "帝都": "北京", "申城": "上海", "花城": "广州", "星城": "长沙", "泉城": "济南"}
DOMAIN_CUES = {
    "flight": ("机票", "航班", "飞机", "坐飞机", "班机", "飞", "flight", "plane", "fly"),
    "train": ("火车", "高铁", "动车", "车票", "车次", "卧铺票", "坐车", "的车", "train", "列车"),
    "hotel": ("酒店", "宾馆", "旅馆", "住的地方", "住处", "房间", "订房", "hotel", "room", "住宿"),
}
DOMAIN_SOUNDS = {"flight": ["机票", "航班"], "train": ["火车", "高铁", "动车"], "hotel": ["酒店", "宾馆"]}
GREETING = re.compile(
    r"^(您好|你好|hello|hi|hey|哈喽|哈罗|嗨喽|嗨|喂|在吗|在不在|有人吗|早上好|上午好|中午好|下午好|晚上好|早安|午安|哈啰|"
    r"小助手|助手|客服|机器人|there|good morning|good afternoon|good evening|早啊|早|"
    r"啊|呀|哦|呢|哈|!|！|~|,|，|\?|？)+$",
    re.I,
)
THANKS = re.compile(
    r"(谢|感谢|多谢|3q|thank|thx|\bty\b|辛苦|麻烦你了|麻烦了|拜拜|再见|bye|回见|回头见|886|\b88\b)", re.I
)
ASK_BOOKING = re.compile(
    r"(订上(?!海)|订好|订了吗|订了没|订成功|订成了|出票|成功了没|成功了吗|成功没|订单|我的预订|预订记录|订了哪些|订了什么|订了啥|"
    r"我订的|刚订的|刚才订的|之前订的|刚刚订|上午订的|下午订的|昨天订的|刚才那张|刚才那个|还在吗|还在吧|"
    r"订到了|订到没|买到了|买好了|买到没|订好没|预订成功|下单成功|订单号|预订号|确认号|单号|我的票|我的机票|我的火车票|"
    r"我的酒店|我订了|都订了|订了几|刚才那单|那单|成了没|booking|reservation|my order|order number|my tickets?|"
    r"confirmation number|booked)",
    re.I,
)
OOS = re.compile(
    r"(天气|下雨|下雪|雾霾|多少度|几度|气温|温度|好冷|太冷|很冷|多冷|冷不冷|好热|很热|太热|热不热|短袖|羽绒服|冬天|夏天|"
    r"几号来着|今天几号|几月几号|周几|星期几|礼拜几|几点了|农历|阴历|限行|尾号|"
    r"股票|股市|大盘|指数|比特币|基金|涨了|跌了|涨停|跌停|"
    r"好吃|火锅|美食|小吃|好玩|景点|园林|好看|海拔|四季|去过|哪年|开通的|历史|"
    r"去年|前年|昨天|前天|上周|上个月|小时候|(?<![点午上晚早凌傍时钟])以前|"
    r"电影|唱歌|唱首|的歌|听歌|音乐|笑话|故事|外卖|写首诗|写诗|你叫什么|名字|你是谁|机器人|你好笨|笨|傻|"
    r"会说英语|英语吗|话费|流量|充值|余额|套餐|宽带|比赛|湖人|赢了|输了|新闻|彩票|"
    r"体育|球赛|足球|篮球|nba|世界杯|电视剧|综艺|明星|星座|翻译|作业|菜谱|做饭|怎么做|减肥|感冒|医院|淘宝|快递|打车|滴滴|"
    r"堵车|路况|地铁|汇率|利率|房价|工资|游戏|宠物|无聊|陪我聊|聊聊天|你喜欢|你几岁|多大了|你是男|你在哪|吃了吗|吃饭了吗|"
    r"刮风|台风|晴天|阴天|下冰雹|穿什么|放假|春节|国庆|过年|攻略|带什么|注意什么|特产|门票|人多吗|有多大|有多少人|"
    r"哈哈|呵呵|啊啊|嘿嘿|是几月|什么节|啤酒节|\bweather\b|\bjoke|\bstocks?\b|\bmovies?\b|\bsongs?\b|\brain\b|\bnews\b)",
    re.I,
)
# questions for a customer-service knowledge base next to the task branch (the demo's carrier): out of scope here
SERVICE_TOPICS = re.compile(r"(话费|流量|套餐|宽带|充值|余额|漫游|携号|营业厅|手机号|号码|信号|账单|积分|5G|4G)")
REQUEST_CUES: tuple[tuple[str, str], ...] = (
    (
        r"(几点|什么时候|啥时候)(能)?(到|落地|抵达|到达)|到达时间|几点到|落地时间|到站.{0,2}几点|"
        r"when does it (arrive|land)|what time does it (arrive|land)|arrival time",
        "arr_time",
    ),
    (
        r"(几点|什么时候|啥时候)(起飞|出发|发车|开|走)|起飞时间|出发时间|发车时间|几点的|"
        r"what time does it (leave|depart)|departure time",
        "dep_time",
    ),
    (r"多久|多长时间|几个小时|几小时|how long", "duration"),
    (r"还有票|还剩几张|剩几张|余票|还有座|还有位|有没有票|any seats|seats left", "seats_left"),
    (r"还有房|还剩几间|剩几间|rooms left", "rooms_left"),
    (r"哪个站上车|哪个站出发|从哪个站|哪个机场(起飞|出发)|从哪个机场|在哪上车", "dep_place"),
    (r"落地是|到哪个站|哪个机场(落地|降落)|到哪个机场|在哪下车|哪个站下车", "arr_place"),
    (r"几星|星级是|星级多少|几颗星|how many stars", "stars"),
    (r"哪个区|在哪个区|在哪儿|在哪里|位置在|在.{1,4}吗|which district|where is it", "district"),
    (
        r"哪个航空|哪家航空|什么航空|哪家公司|航空公司|是.{0,2}(国航|东航|南航|海航|川航|深航).{0,2}吗|which airline",
        "airline",
    ),
    (r"几等座|什么座|什么舱|哪个舱|which class", "seat_class"),
    (r"什么铺|哪个铺|上铺还是下铺|which berth", "berth"),
    (r"多少钱|多少|票价|价格|价钱|几块|how much|price|what does it cost", "price"),
)
CONFIRM_WORDS = re.compile(
    r"^(确定|确认|确认预订|确定预订|好的|好哒|好啊|好嘞|好吧|好|嗯嗯|嗯|对的|对对对|对对|对|没错|是的|是|可以可以|可以|行行行|行|"
    r"没问题|没毛病|就这个|就它了|就它|就这样|那就这样吧|那就这样|就这么定了|就这么办|订吧|订|就按这个订|按这个订|帮我订|ok的|ok|"
    r"okay|yes|yep|yup|yeah|sure|alright|book it|go ahead|do it|confirm|妥|成|中|好滴|好呀|嗯呢|恩|嗯好|嗯对|"
    r"对头|是的是的|麻烦订一下|麻烦订|订一下|帮我订一下|请帮我确认|帮我确认|请确认|就定这个|定这个|就这么着|这么着|直接订|直接下单|"
    r"直接|下单吧|嗯哼|阔以|安排|安排吧|走起|"
    r"可以的|行的|同意|要的|定|下单|成交|确认无误|那就|就要这个|就订这个|订这个|就这家|就这趟|就这班|就订它|订它|就要它|"
    r"就这么订|这么订|可|"
    r"吧|了|啊|呀|哒|的|呢|哦|嘛|~|,|，|。|!|！|\s|please)+$",
    re.I,
)
FILLER_ONLY = re.compile(r"[吧了啊呀哒的呢哦嘛~,，。!！\s]*", re.I)


class _Cue:
    """A yes/no word list that matches a whole clause, but never a clause of fillers alone (啊？ / 了)."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return None if FILLER_ONLY.fullmatch(text) else self.pattern.fullmatch(text)


CONFIRM = _Cue(CONFIRM_WORDS)
# 好困 / 好累 / 好冷: an exclamation, not 好 (a yes books)
EXCLAIMED = r"(?!困|累|冷|热|烦|饿|忙|难|惨|远|麻烦|无聊|郁闷|开心|爽|晕|痛|疼|吵|挤|堵|贵|久|慢)"
CONFIRM_START = re.compile(rf"^(确定|确认|好的|好{EXCLAIMED}|嗯|对|没问题|就这个|行|可以|ok|yes|sure|订吧)", re.I)
DENY_WORDS = re.compile(
    r"^(不要了|不要|先不订|不订了|不订|不对|不行|这个不行|那不行|不不不|不不|不了|不用了|不用|取消吧|取消|算了|"
    r"没有别的了|没有了|没别的了|没别的|没事了|没了|不需要了|不需要|不想要|不想订|别订了|别订|先不要|再看看|我再想想|再想想|等等|"
    r"不是这个|错了|换一个|no thanks|no|nope|nah|not now|cancel|don't|太贵了不要|太贵了|那算了|算了吧|还是算了|"
    r"再看看别的|看看别的|没有|暂时不用|暂时不|先这样|我再考虑一下|再考虑一下|考虑一下|我考虑考虑|考虑考虑|"
    r"我再考虑考虑|再考虑考虑|我想想|以后再说|改天再说|回头再说|再说吧|就算了|不退了|不退|别退了|不取消了|不取消|"
    r"先不取消|不用取消|不用退|不改了|不改签了|不用改了|别改了|"
    r"吧|了|啊|呀|,|\s|thanks|谢谢)+$",
    re.I,
)
DENY = _Cue(DENY_WORDS)
DENY_START = re.compile(
    r"^(不要|先不订|不订|不行|这个不行|那不行|不不|不了|不用|取消|算了|就算了|别订|先不要|不想|不需要|没有了|没了|再想想|我再想想|"
    r"不退|别退|不取消|先不取消|不改了|不改签|"
    r"no\b|nope|nah|cancel)",
    re.I,
)
CORRECTION = re.compile(r"(不对|不是|错了|说错|搞错)")
# a question that checks rather than agrees (确定吗 / 对吧 / 好不好 / is that right?): never a yes (a yes books)
ASKS = re.compile(
    r"([吗么][\s。.~～]*$|(好|行|可|对|是|确定|确认|要|订)不(好|行|可|对|是|确定|确认|要|订)|(确定|确认|行|好|可以|对)不$|"
    r"(对|是|没错|没问题|没搞错|是这个|是这样)吧$|真的|没搞错|^(is|are|am|was|does|did|can|could|should|would|shall|"
    r"really)\b|you sure)",
    re.I,
)
# taking a constraint back: 不限预算 / 预算不要了 / 多少钱都行 / 别的时间也行 / 时间放宽 / 全天的 / 几星都行
DROP_CUE = re.compile(
    r"(不限|不管|都行|都可以|都没关系|无所谓|随便|不要了|不用了|不要求|不讲究|放宽|去掉|不用管|全天|任何时间|什么时候都|"
    r"多少钱都|贵点也|贵一点也|别的时间也|其他时间也|哪天都|几点都|几星都|哪个区都|哪家都|什么舱都|什么座都|"
    r"any time|any price|no limit)",
    re.I,
)
DROP_FAMILIES = (
    (r"(预算|价格|价钱|价位|限价|多少钱|钱|贵|price|budget)", ("max_price", "min_price")),
    (r"(时间|时段|几点|全天|早晚|什么时候|早上|上午|中午|下午|晚上|time)", ("period", "time_from", "time_to")),
    (r"(星级|几星|星|档次)", ("stars", "min_stars")),
    (r"(哪个区|区域|地段|位置|区)", ("district",)),
    (r"(航空公司|航司|哪家航空)", ("airline",)),
    (r"(舱位|座位|座次|等级|什么舱|什么座|舱)", ("seat_class", "berth")),
    (r"(铺位|上下铺|铺)", ("berth",)),
    (r"(车型|什么车|高铁动车|G字头|D字头)", ("train_kinds",)),
    (r"(品牌|牌子|哪家酒店|哪家)", ("brand",)),
)


def _drops(text: str, whole: str, ctx: Context, said: JSONDict, said_whole: Callable[[], JSONDict]) -> JSONDict | None:
    """Constraints the user takes back (slot -> None) among those the task under way has: named by the clause's
    own slot word, or the utterance's when the clause has none (预算，不限了); a family the clause gives a value
    for is kept (五星级多少钱都行 keeps the stars). {} when the words take back something not set; None when
    there is no such word."""
    if not ctx.domain or not DROP_CUE.search(text):
        return None
    for source in (text, whole):
        if source is whole:
            said = said_whole()
        families = [f for pattern, f in DROP_FAMILIES if re.search(pattern, source, re.I) and not set(f) & set(said)]
        if families:
            return {k: None for f in families for k in f if ctx.state.get(k) not in (None, "", [])}
    return None


# asking for another option (有没有更便宜的 / 还有别的吗 / 能不能换): after a yes, the yes is withdrawn
OTHER_OPTION = re.compile(r"(有没有|还有没有|有别的|还有别的|能不能|能否|可不可以|可以.{0,6}吗|行不行|要不要)")
RESERVATION = re.compile(r"^\s*(不过|但是|可是|只是|就是说|but\b|however)")
# 第二个 / 换第三趟 / the second one: an ordinal picking one of the offers listed before the read-back
ORDINAL = re.compile(
    rf"第\s*({NUM})\s*(?:个|趟|班|家|张)|^(?:换|就|要|订|选)?\s*第\s*({NUM})\s*(?:吧|的)?$|"
    r"\b(?:the\s+)?(first|second|third|fourth|fifth)\s+one\b",
    re.I,
)
# cancelling a booking already made: a cancel verb and a word pointing at something booked
CANCEL = re.compile(r"(取消|退掉|退了|退票|退订|退机票|退火车票|撤销|不要了|\bcancel)", re.I)
BOOKED_MARK = re.compile(
    r"(订单|这单|那单|这一单|订好的|订了的|已订|已经订|刚订|刚才订|之前订|前面订|订的|预订|那张|那间|那家|票|酒店|宾馆|房间|航班|火车|"
    r"booking|reservation|order|ticket|hotel|flight|train)",
    re.I,
)
# changing a booking already made (改签): 改签/改期, or a change verb with a word for something booked
REBOOK = re.compile(r"(改签|改期|\brebook|change my (booking|ticket|flight|train))", re.I)
REBOOK_VERB = re.compile(r"(改|换|调)")
BOOKED_THING = re.compile(
    r"(订单|订好的|订了的|已订|已经订|刚订|刚才订|之前订|前面订|刚才那张|刚才那个|那张票|那张机票|那张火车票|那张车票|我的票|"
    r"我的机票|我的火车票|我的车票|买的票|订的票|订的机票|订的火车票|订的酒店|订的房间|订的那)"
)
# during a read-back, only a word for something already booked makes 取消 a cancellation (取消预订 = do not book)
MADE_MARK = re.compile(
    r"(订单|这单|那单|这一单|订好的|订了的|已订|已经订|刚订|刚才订|之前订|前面订|上一个|第一个订|退票|退订|退掉|退了|"
    r"my booking|reservation)",
    re.I,
)
# relative preferences against the offer(s) on the table: 便宜点的 / 贵一点的 / 早一点的 / 晚一点的
RELATIVE = (
    (r"(更便宜|便宜(一)?点|便宜些|再便宜|cheaper)", "cheaper"),
    (r"(更贵|贵(一)?点|贵些|好(一)?点的|档次高(一)?点|更好的|pricier|better one)", "pricier"),
    (r"(更早|早(一)?点|早些|提早点|earlier)", "earlier"),
    (r"(更晚|晚(一)?点|晚些|迟(一)?点|later one|a later)", "later"),
)
RELATIVE_FEATURE = {"cheaper": "cheapest", "pricier": "most_expensive", "earlier": "earliest", "later": "latest"}
FILLER = re.compile(
    r"^(嗯+|额+|呃+|那个|就是|啊|哦|噢|唔|那|然后|请问|麻烦|帮我|我想问下|我想问一下|顺便|对了|另外|先|不过|但是|可是)+"
)
CONNECTIVES = re.compile(r"(然后|顺便|对了|另外|还有就是|再帮我|再订|再给我|也帮我|and also|and i also| and )")
CHANGE_CUES = r"(目的地|出发地|改成|换成|改到|换到|去|到|飞|回|票|车|机|actually|instead|change|mean)"
# asking whether there really is none (一班都没有吗？ / 真的没有吗): a question about the search just made
NONE_ASKED = re.compile(
    r"(一[个班趟家间张列]都没有|都没有|真的?没有|确实没有|就没有|全都没有|完全没有|一点都没有|都没了)"
)
# "if X cannot be had, Y": 五星没有的话四星也行 / 上午没有就下午吧 / 要是没有直飞的话
FALLBACK = re.compile(r"^.{1,12}?(没有的话就?|没有就|不行的话就?|不行就|订不到的话就?|订不到就|满了的话就?|满了就)")
SAME_DAY = re.compile(r"(同一天|同一日|同天|当天|那一天|那天|same day)", re.I)
DATE_SHIFT = re.compile(rf"(提前|早|推迟|推后|延后|往后推|往后|晚|改晚|往前)\s*({NUM})\s*天")


@dataclass
class Act:
    """One dialog act with its normalised slots (``{"price": "?"}`` for a requested attribute)."""

    act: str
    slots: JSONDict = field(default_factory=dict)

    def to_dict(self) -> JSONDict:
        return {"act": self.act, "slots": dict(self.slots)}


@dataclass
class Context:
    """What the system just did (the bank's ``context``): task under way, open question, offers, known slots."""

    domain: str | None = None
    open_question: str | None = None
    offers: list[Mapping[str, object]] = field(default_factory=list)
    state: JSONDict = field(default_factory=dict)
    bookings: list[Mapping[str, object]] = field(default_factory=list)
    suggestion: Mapping[str, object] | None = None

    @classmethod
    def from_dict(cls, data: JSONObject | None) -> Context:
        data = data or {}
        suggestion = data.get("suggestion")
        return cls(
            as_text_or_none(data.get("domain")),
            as_text_or_none(data.get("open_question")),
            [offer for offer in as_array(data.get("offers")) if isinstance(offer, dict)],
            dict(as_object(data.get("state"))),
            [booking for booking in as_array(data.get("bookings")) if isinstance(booking, dict)],
            suggestion if isinstance(suggestion, dict) else None,
        )


def _is_english(text: str) -> bool:
    letters = sum(c.isascii() and c.isalpha() for c in text)
    han = sum("\u4e00" <= c <= "\u9fff" for c in text)
    return letters > 0 and han == 0


# 对了 / 哦对了 / 对了对了 ("oh, by the way") opening a further clause: a discourse marker, not 对 (a yes books)
AFTERTHOUGHT = re.compile(
    r"(?:^|(?<=[，,。！!；;\s]))[哦噢啊哎诶欸呃嗯]*(?:对了)+[，,。！!~～…\s]*(?=[^，,。！!~～…\s])"
)


def without_afterthought_marker(text: str) -> str:
    """``text`` without the 对了 that opens an afterthought (对了，改成住两晚 -> 改成住两晚); 对了 said alone stays."""
    return AFTERTHOUGHT.sub("", text.strip())


def _normalise(text: str, gaz: Gazetteer) -> str:
    """Typing slips and mixed-language words in a Chinese utterance, put into the words the parser knows."""
    text = without_afterthought_marker(text)
    text = text.replace("俩", "两个").replace("仨", "三个")  # colloquial numbers: 俩人 = 两个人
    text = re.sub(r"([上中下卧])辅", r"\1铺", text)
    text = text.replace("仓", "舱") if re.search(r"(经济|商务|头等|公务)仓", text) else text
    for nick, city in CITY_NICKNAMES.items():
        text = text.replace(nick, city)
    for place in sorted(gaz.places, key=len, reverse=True):
        short = place[:-1] if place.endswith("站") else None
        if short and short not in gaz.cities and len(short) >= 3:
            text = re.sub(rf"{re.escape(short)}(?!站)", place, text)
    if not _is_english(text):
        names = sorted((k for k in gaz.cities if k.isascii()), key=len, reverse=True)
        for name in names:
            text = re.sub(rf"(?i)(?<![a-z]){re.escape(name)}(?![a-z])", gaz.cities[name], text)
        for word, zh in (("flight", "航班"), ("hotel", "酒店"), ("train", "火车")):
            text = re.sub(rf"(?i)(?<![a-z]){word}s?(?![a-z])", zh, text)
    return text


def _clauses(text: str) -> list[tuple[str, bool]]:
    """(clause, is a question) pieces of an utterance, in order."""
    english = _is_english(text)
    text = re.sub(r"(?i)\b(between\s+\d{1,2}(?::\d\d)?\s*(?:am|pm)?)\s+and\s+", r"\1 to ", text)  # one window
    marked = CONNECTIVES.sub(lambda m: "|" + m.group(0).strip(), text)
    if english:
        parts = re.split(r"([,.;!?|]+)", marked)
    else:
        parts = re.split(r"([，,。；;！!？?|…~]+|\s+(?=[^\sA-Za-z0-9])|(?<=[^\sA-Za-z0-9])\s+)", marked)
    out: list[tuple[str, bool]] = []
    for i in range(0, len(parts), 2):
        piece = parts[i].strip() if parts[i] else ""
        sep = parts[i + 1] if i + 1 < len(parts) else ""
        if piece:
            out.append((piece, "?" in (sep or "") or "？" in (sep or "")))
    return out


# ---------------------------------------------------------------------------------------------- slot finders
def _offer_code(offer: Mapping[str, object]) -> str:
    return str(offer.get("code") or offer.get("flight_no") or offer.get("train_no") or "")


def _brand_of(text: str, gaz: Gazetteer) -> str | None:
    for brand in sorted(gaz.brands, key=len, reverse=True):
        short = brand.replace("酒店", "").replace("快捷", "")
        for form in {brand, short, short[:2] if len(short) >= 3 and short not in ("锦江之星",) else short}:
            if len(form) >= 2 and form in text:
                if form == "锦江" and "锦江之星" not in text:
                    continue
                return brand
    return None


def _district_of(text: str, gaz: Gazetteer, city: str | None) -> str | None:
    for name in sorted(gaz.districts, key=len, reverse=True):
        if name in text:
            if name == "锦江" and "锦江之星" in text:
                continue
            if name == "浦东" and "浦东机场" in text:
                continue
            if city and city not in gaz.districts[name] and any(city in gaz.districts[n] for n in gaz.districts):
                pass
            return name
    return None


def _airline_of(text: str, gaz: Gazetteer) -> str | None:
    lower = text.lower()
    for name in gaz.airlines or {"国航": "CA", "东航": "MU", "南航": "CZ", "海航": "HU", "川航": "3U", "深航": "ZH"}:
        if name in text:
            return name
    for en, name in AIRLINES_EN.items():
        if en in lower:
            return name
    return None


def _code_of(text: str) -> str | None:
    m = re.search(r"(?<![A-Za-z0-9])([A-Za-z0-9]{2}\d{3,4}|[GDKTZgdktz]\d{1,4})(?![A-Za-z0-9])", text)
    if m and re.search(r"[A-Za-z]", m.group(1)):
        return m.group(1).upper()
    return None


def code_domain(code: str) -> str:
    """Whether a code names a train (G4990, D6912, K423) or a flight (CA1234, 3U3892)."""
    return "train" if re.fullmatch(r"[GDCKTZ]\d{1,4}", code.upper()) else "flight"


def _classes_of(text: str, english: bool) -> list[str]:
    if english:
        lower = text.lower()
        for phrase, value in sorted(CLASS_EN.items(), key=lambda kv: -len(kv[0])):
            if phrase in lower:
                return [value]
        return []
    return [CLASS_WORDS[w] for _s, _e, w in _find(text, list(CLASS_WORDS))]


def _class_value(found: list[str], text: str, domain: str | None) -> str | list[str] | None:
    if not found:
        return None
    if len(found) > 1 and re.search(r"(没有就|不行就|没有的话|要不就|太贵|换成|改成|还是)", text):
        found = [found[-1]] if not re.search(r"还是.*(太贵|不要)", text) else [found[0]]
    elif len(found) > 1 and re.search(r"(或|还是|都行|都可以)", text):
        values: list[str] = []
        for f in found:
            values += SLEEPERS if f == "卧铺" else [f]
        return sorted(set(values), key=values.index)
    value = found[0]
    if value == "卧铺" and any(f in SLEEPERS for f in found):  # 卧铺，软卧下铺: the sleeper named
        value = next(f for f in found if f in SLEEPERS)
    if value == "卧铺":
        return list(SLEEPERS)
    if value == "business":
        return "商务座" if domain == "train" else "商务舱"
    if value == "first":
        return "一等座" if domain == "train" else "头等舱"
    return value


def _berths_of(text: str, english: bool) -> str | list[str] | None:
    if english:
        found = [v for k, v in {"upper": "上铺", "middle": "中铺", "lower": "下铺"}.items() if k in text.lower()]
    else:
        found = [BERTH_WORDS[w] for _s, _e, w in _find(text, list(BERTH_WORDS))]
    if not found:
        return None
    return found[0] if len(found) == 1 else found


def _kinds_of(text: str) -> list[str] | None:
    kinds: list[str] = []
    for word, letters in sorted(KIND_WORDS.items(), key=lambda kv: -len(kv[0])):
        if word in text:
            kinds += [k for k in letters if k not in kinds]
            text = text.replace(word, "")
    if re.search(r"(?<![A-Za-z])G字头", text):
        kinds.append("G")
    return kinds or None


def _clock(hour: int, minute: int, period: str | None) -> str:
    if period in ("下午", "晚上", "傍晚") and hour < 12:
        hour += 12
    if period == "中午" and hour < 5:
        hour += 12
    return f"{min(hour, 23):02d}:{minute:02d}"


CLOCK = rf"({NUM})\s*[点:：时]\s*(半|一刻|三刻|({NUM})\s*分?)?"
PERIOD_SAID = r"(凌晨|早上|上午|中午|下午|傍晚|晚上|今晚|明晚|明早|早晨|清早)"
# a window between two clock times: 下午2点到5点之间 / 10点至12点 / 两点到四点
CLOCK_RANGE = re.compile(
    rf"{PERIOD_SAID}?\s*{CLOCK}\s*(?:钟)?\s*(?:到|至|-|~|～|—)\s*{PERIOD_SAID}?\s*{CLOCK}\s*(?:钟)?\s*(?:之间|以内|中间)?"
)
# a bound from a named window without a clock time: 中午前 / 中午以后 / 下午之前 / 傍晚以后
PERIOD_BOUND = re.compile(rf"{PERIOD_SAID}\s*(以前|之前|前|以后|之后|后)(?!天)")
NOON = {"中午": "12:00"}
# a window refused: 下午不行 / 晚上的不要 / 不要早上的 (no constraint; it refuses what was offered)
NEGATED_PERIOD = re.compile(
    rf"^(?:(?:不要|不考虑|别给我|不想要){PERIOD_SAID}(?:的|那些|那班|那趟|出发)?|"
    rf"{PERIOD_SAID}(?:的|那些|那班|那趟|的话|出发)?(?:也|都|肯定|真的|可)?"
    r"(?:不行|不可以|不要|不方便|没空|不合适|不考虑|来不及|赶不上|不太行|走不了|去不了))(?:了|啊|吧|呢|哦)*$"
)  # 中午前 / 中午以后: before or after noon itself, not the lunch window
REFUSED_PERIOD = re.compile(NEGATED_PERIOD.pattern.removeprefix("^").removesuffix("$"))
"""The same refusal anywhere in a turn (上午不行，我下午才有空)."""


def _clock_of(hour_word: str, extra: str | None, minute_word: str | None, period: str | None) -> str:
    hour = cn_number(hour_word) or 0
    minute = {"半": 30, "一刻": 15, "三刻": 45}.get(extra or "")
    if minute is None:
        minute = (cn_number(minute_word) or 0) if minute_word else 0
    return _clock(hour, minute, PERIOD_WORDS.get(period or "", period))


def _time_bounds(text: str, english: bool) -> tuple[str | None, str | None]:
    """(time_from, time_to) of a departure window said as clock times or a bound: 3点以后 / 10点前 /
    下午2点到5点之间 / 中午前 / 晚上8点以后 / 十点左右 (an hour either side) / after 6pm / between 2 and 5 pm."""
    if english:
        lower = text.lower()
        m = re.search(
            r"\bbetween\s+(\d{1,2})(?::(\d\d))?\s*(am|pm)?\s+(?:and|to)\s+(\d{1,2})(?::(\d\d))?\s*(am|pm)?", lower
        )
        if m:
            pm = "下午" if "pm" in (m.group(3), m.group(6)) else None
            first = _clock(int(m.group(1)), int(m.group(2) or 0), pm if m.group(3) != "am" else None)
            return first, _clock(int(m.group(4)), int(m.group(5) or 0), pm if m.group(6) != "am" else None)
        m = re.search(r"\b(after|before|by)\s+(\d{1,2})(?::(\d\d))?\s*(am|pm)?", lower)
        if m:
            clock = _clock(int(m.group(2)), int(m.group(3) or 0), "下午" if m.group(4) == "pm" else None)
            return (clock, None) if m.group(1) == "after" else (None, clock)
        m = re.search(r"\bbefore\s+noon\b", lower)
        return (None, "12:00") if m else (None, None)
    m = CLOCK_RANGE.search(text)
    if m:
        first_period = m.group(1)
        second_period = m.group(5) or first_period
        start = _clock_of(m.group(2), m.group(3), m.group(4), first_period)
        end = _clock_of(m.group(6), m.group(7), m.group(8), second_period)
        if end <= start and not m.group(5) and first_period is None:
            end = _clock_of(m.group(6), m.group(7), m.group(8), "下午")  # 10点到2点: the end is after noon
        if end > start:
            return start, end
    m = re.search(
        rf"{PERIOD_SAID}?\s*{CLOCK}\s*(?:钟)?\s*(以后|之后|后|以前|之前|前|以内|左右|上下)",
        text,
    )
    if m:
        clock = _clock_of(m.group(2), m.group(3), m.group(4), m.group(1))
        if m.group(5) in ("左右", "上下"):  # 十点左右: an hour either side
            hour, minute = map(int, clock.split(":"))
            return f"{max(hour - 1, 0):02d}:{minute:02d}", f"{min(hour + 1, 23):02d}:{minute:02d}"
        return (clock, None) if "后" in m.group(5) else (None, clock)
    m = PERIOD_BOUND.search(text)
    if m:
        period = PERIOD_WORDS.get(m.group(1), m.group(1))
        if period in WINDOWS:
            start, end = WINDOWS[period]
            if "前" in m.group(2):
                return None, NOON.get(period, start)
            return NOON.get(period, start), None
    return None, None


def _period_of(text: str, english: bool) -> str | None:
    if english:
        lower = text.lower()
        for word, name in sorted(PERIOD_EN.items(), key=lambda kv: -len(kv[0])):
            if re.search(rf"\b{word}\b", lower):
                return name
        return None
    if re.search(r"(早上好|晚上好|下午好)", text):
        return None
    for word in CLASS_WORDS:  # 商务舱 sounds like 上午 (shang wu): words said exactly take no match by sound
        text = text.replace(word, "□" * len(word))
    # 上午不行，我下午才有空: a window refused inside a longer turn is no window asked for
    text = REFUSED_PERIOD.sub(lambda m: "□" * len(m.group(0)), text)
    found = _find(text, list(PERIOD_WORDS))
    return PERIOD_WORDS[found[0][2]] if found else None


def _price_of(text: str, open_question: str | None, english: bool) -> int | None:
    if english:
        m = re.search(r"\b(?:under|below|less than|at most|within|max(?:imum)?|budget(?: of)?)\s*[¥$]?\s*(\d+)", text)
        return int(m.group(1)) if m else None
    for source in (text, canonical(text)):
        m = re.search(
            rf"(?:不超过|不高于|低于|少于|预算|最多|不要超过|别超过|控制在|价格在)"
            rf"(?:可以|能|就)?(?:提到|提高到|加到|放宽到|放到|降到|调到|调整到|升到|涨到|增加到|改成|改到|到|是|为|大概)?"
            rf"\s*({NUM})\s*(?:元|块)?"
            rf"|({NUM})\s*(?:元|块|块钱)?\s*(?:[以一]内|[以一]下|之内|内|左右)",
            source,
        )
        if m:
            value = cn_number(m.group(1) or m.group(2))
            if value and 30 <= value <= 100_000:
                return value
    if open_question == "max_price":
        m = re.search(rf"({NUM})\s*(?:元|块)", text) or re.fullmatch(rf"\s*({NUM})\s*(?:吧|左右|的|呢|啊)?\s*", text)
        if m:
            return cn_number(m.group(1))
    return None


def _count(text: str, pattern: str) -> int | None:
    m = re.search(pattern, text)
    if not m:
        return None
    return cn_number(m.group(1))


def _hotel_numbers(text: str, english: bool) -> dict[str, int]:
    out: dict[str, int] = {}
    if english:
        lower = text.lower()
        words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
        for slot, pattern in (
            ("nights", r"(\d|one|two|three|four|five)\s+nights?"),
            ("rooms", r"(\d|one|two|three|four|five)\s+rooms"),
            ("guests", r"(\d|one|two|three|four|five)\s+(?:guests|people|persons|adults)"),
        ):
            m = re.search(pattern, lower)
            if m:
                out[slot] = words.get(m.group(1)) or int(m.group(1))
        return out
    n = _count(text, rf"住\s*({NUM})\s*(?:个)?晚") or _count(text, rf"({NUM})\s*(?:个)?晚(?:上)?(?!上好)")
    if n and not re.search(rf"({NUM})\s*点", text[max(0, text.find("晚") - 3) : text.find("晚") + 3]):
        out["nights"] = n
    if re.search(rf"({NUM})\s*间.{{0,4}}({NUM})\s*间", text):
        out["rooms"] = len(re.findall(rf"({NUM})\s*间", text))
    else:
        rooms = _count(text, rf"({NUM})\s*间")
        if rooms and (rooms > 1 or re.search(r"(就|只要|只|一间就|一间够)", text)):
            out["rooms"] = rooms
    guests = _count(text, rf"({NUM})\s*(?:个)?(?:人|位)") or _count(text, rf"我们\s*({NUM})\s*(?:个)")
    if re.search(r"(就我一个|就我自己|我一个人|一个人住|就一个人)", text):
        guests = 1
    if guests:
        out["guests"] = guests
    return out


def _passengers(text: str, english: bool) -> int | None:
    if english:
        m = re.search(r"(\d|two|three|four)\s+(?:people|passengers|tickets|adults)", text.lower())
        if m:
            return {"two": 2, "three": 3, "four": 4}.get(m.group(1)) or int(m.group(1))
        return None
    if re.search(r"一家三口", text):
        return 3
    if re.search(r"一家四口", text):
        return 4
    n = (
        _count(text, rf"({NUM})\s*(?:个)?(?:人|位)")
        or _count(text, rf"({NUM})\s*张")
        or _count(text, rf"(?:一共|总共|共)\s*({NUM})\s*(?:个|位)?$")
    )
    return n if n and n > 1 else None


def _stars_of(text: str, english: bool) -> tuple[int | None, int | None]:
    if english:
        m = re.search(r"\b(\d|one|two|three|four|five)[- ]star(?:s)?(\s+or\s+(?:above|more|better)|\+)?", text.lower())
        if m:
            value = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}.get(m.group(1)) or int(m.group(1))
            return (None, value) if m.group(2) else (value, None)
        return None, None
    for source in (text, canonical(text)):
        m = re.search(rf"(至少|起码)?\s*({NUM})\s*星(?:级)?(?:酒店)?\s*((?:及)?[以一]上|起)?", source)
        if m:
            stars = cn_number(m.group(2))
            if stars and 1 <= stars <= 5:
                return (None, stars) if (m.group(1) or m.group(3)) else (stars, None)
    return None, None


def _dates(text: str, today: dt.date, english: bool, state: JSONDict) -> dict[str, str]:
    """date (departure / check-in) and check_out named in a clause."""
    out: dict[str, str] = {}
    m = re.search(r"(住到|待到|退房|到(?=.{1,6}退房))(.{0,8})", text)
    checkout_text = None
    if m:
        if m.group(1) == "退房":
            checkout_text = text[max(0, m.start() - 8) : m.start()]
            rest = text[: max(0, m.start() - 8)] + text[m.end() :]
            checkout_text = re.split(r"(入住|住)", checkout_text)[-1]
            rest = text[: m.start() - len(checkout_text)]
        else:
            checkout_text = m.group(2)
            rest = text[: m.start()]
        checkout = _date_in(checkout_text, today, english)
        if checkout:
            out["check_out"] = checkout
            text = rest
    if re.search(r"(这周末|这个周末|周末|本周末)", text) and not re.search(r"下(个)?周末", text):
        out["date"] = (today + dt.timedelta(days=(5 - today.weekday()) % 7)).isoformat()
    elif re.search(r"下(个)?周末", text):
        monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(weeks=1)
        out["date"] = (monday + dt.timedelta(days=5)).isoformat()
    else:
        date = _date_in(text, today, english)
        if date:
            out["date"] = date
    m = DATE_SHIFT.search(text)
    if m and state.get("date") and "date" not in out:
        days = cn_number(m.group(2)) or 0
        sign = -1 if m.group(1) in ("提前", "早", "往前") else 1
        out["date"] = (dt.date.fromisoformat(as_str(state["date"])) + dt.timedelta(days=sign * days)).isoformat()
    if out.get("date") and re.search(r"(第二天|次日|隔天)", text):
        out["date"] = (dt.date.fromisoformat(out["date"]) + dt.timedelta(days=1)).isoformat()
    return out


def _date_in(text: str, today: dt.date, english: bool) -> str | None:
    if re.search(r"(明早|明晚)", text):
        return (today + dt.timedelta(days=1)).isoformat()
    if re.search(r"今晚", text):
        return today.isoformat()
    date = parse_date(text, today, english)
    if date is None and not english:
        date = parse_date(canonical(text), today, english)
    return date


def _domain_named(text: str, english: bool) -> str | None:
    lower = text.lower()
    if re.search(r"不(飞|坐飞机)了?", text):
        text = re.sub(r"不(飞|坐飞机)了?", "", text)
    best: tuple[int, str] | None = None
    for domain, words in DOMAIN_CUES.items():
        for word in words:
            if word.isascii():
                m = re.search(rf"\b{word}", lower)
                pos = m.start() if m else -1
            else:
                pos = text.rfind(word) if domain != "flight" or word != "飞" else _fly_pos(text)
            if pos >= 0 and (best is None or pos > best[0]):
                best = (pos, domain)
    if best is None and not english:
        for domain, sounds in DOMAIN_SOUNDS.items():
            for start, end, _w in _find(text, sounds, fuzzy=True):
                if not re.search(r"[零一二两三四五六七八九十0-9]", text[start:end]):
                    return domain
    return best[1] if best else None


def _fly_pos(text: str) -> int:
    starts = [m.start() for m in re.finditer(r"飞(?!快)", text)]
    return starts[-1] if starts else -1


# ---------------------------------------------------------------------------------------------- the reader
@dataclass
class _Clause:
    text: str
    question: bool
    act: str | None = None
    slots: JSONDict = field(default_factory=dict)
    extra: list[Act] = field(default_factory=list)


class Understander:
    """Reads user turns against one gazetteer and one 'today'."""

    def __init__(self, gazetteer: Gazetteer, today: dt.date) -> None:
        self.gaz = gazetteer
        self.today = today

    def __call__(self, text: str, context: Context | JSONDict | None = None) -> list[Act]:
        return understand(text, context, self.gaz, self.today)


def understand(
    text: str, context: Context | JSONDict | None, gaz: Gazetteer, today: dt.date, by_sound: bool = True
) -> list[Act]:
    """The acts of one user turn, in order, with slots normalised as in the utterance bank's README.

    ``by_sound=False`` switches off matching names and cue words by pinyin (the benchmark's ablation)."""
    token = _BY_SOUND.set(by_sound)
    try:
        return no_yes_in_questions(_understand(text, context, gaz, today), text)
    finally:
        _BY_SOUND.reset(token)


def rules_decide(text: str, context: Context, acts: list[Act]) -> bool:
    """Whether the rules' reading of ``text`` stands whatever a learned reader hears: turns of kinds the utterance
    banks hold no example of — another listed offer picked during a read-back (第二个), one of the alternatives
    offered when nothing matched picked (就9点35那趟), whether there really is none (一班都没有吗？), a window
    refused (下午不行), a train's code said while hotels are listed — and a choice with its yes said together
    (the yes is heard by the rules' word lists; the model would drop it and ask again)."""
    oq = context.open_question
    if oq in ("confirm_booking", "offer_alternative") and any(a.act == "select" for a in acts):
        return True
    names = [a.act for a in acts]
    if oq == "choose_offer" and any(names[i : i + 2] == ["select", "confirm"] for i in range(len(names) - 1)):
        return True  # 第二趟，行，顺便…: a choice and its yes, said together (a further request may follow)
    if any(a.slots.get("availability") or (a.slots.get("code") and a.act == "inform") for a in acts):
        return True  # (a train or flight code said while something else is under way: a request for it)
    return any(NEGATED_PERIOD.match(FILLER.sub("", clause).strip()) for clause, _q in _clauses(text))


def _asks(clause: str, marked: bool) -> bool:
    """Whether a clause is a question (a question mark after it, 吗/么 at its end, 好不好, 对吧, is that …)."""
    return marked or bool(ASKS.search(FILLER.sub("", clause).strip() or clause))


def no_yes_in_questions(acts: list[Act], text: str) -> list[Act]:
    """A question is never a confirmation (a yes books): in a turn holding a question, ``confirm`` stays only
    when some other clause says yes as a statement ("几点到？好，订吧"); otherwise it is dropped, and a turn left
    with nothing is a question about the offer as a whole, ``request{}`` ("确定吗？" / "对吧" / "is that
    right?"), answered by saying nothing is done yet and reading the offer back. Every reader's acts end here."""
    if not any(a.act == "confirm" for a in acts):
        return acts
    clauses = _clauses(text.strip())
    asking = [i for i, (c, q) in enumerate(clauses) if _asks(c, q) or OTHER_OPTION.search(c)]
    yes = [
        i
        for i, (clause, marked) in enumerate(clauses)
        if (body := FILLER.sub("", clause).strip())
        and not _asks(clause, marked)
        and (CONFIRM.fullmatch(body) or CONFIRM_START.match(body))
    ]
    reservation = bool(yes) and bool(RESERVATION.search(" ".join(c for c, _q in clauses[yes[0] + 1 :])))
    if not asking and not reservation:
        return acts
    if yes and not reservation and (not asking or max(asking) < max(yes)):
        return acts  # 几点到？好，订吧: the yes comes after the question
    # 好吧，不过有没有再便宜点的？ / 可以，不过这班是哪家航空的？: a yes followed by a question or a "but" is no yes
    return [a for a in acts if a.act != "confirm"] or [Act("request")]


# a yes that names the action asked about (确认改签 / 机票确定取消 / 那就退掉吧 / 好，订吧): that yes, said plainly
_ASKED_THING = r"(?:机票|火车票|高铁票|车票|票|酒店|房间|订单|单子|航班|火车|高铁)"
_ASKED_OBJECT = rf"(?:(?:这|那)?(?:一)?(?:张|个|单|间|班|趟)?{_ASKED_THING}?\s*\d*)"
_YES = r"(?:确认|确定|同意|好的|好|对|行|可以|没问题|是的|嗯)"
_NAMED_ACTION = {
    "book": r"(?:预订|预定|订票|订|下单|买)",
    "change": r"(?:改签|改期|改)",
    "cancel": r"(?:取消|退票|退订|退掉|退|撤销)",
}


def _named_yes(body: str, action: str) -> bool:
    """Whether ``body`` (a clause, fillers stripped) is a yes to the question asking to do ``action``: the action's
    verb with at most the thing it is done to and a yes word, 就/那就 or 吧 around it (火车票确定取消 / 那就改签吧);
    a cancellation or change asked about is also agreed to by its verb alone (取消这张票 / 改签)."""
    verb = _NAMED_ACTION[action]
    m = re.fullmatch(
        rf"{_ASKED_OBJECT}(?P<yes>{_YES})?[，,\s]*(?P<so>就这么|那就|就|这么|那)?(?:要|帮我|给我|请)?{verb}(?:一下)?"
        rf"{_ASKED_OBJECT}(?P<tail>[吧了啊呀的掉嘛]*)",
        body,
    )
    return bool(m and (action != "book" or m.group("yes") or m.group("so") or "吧" in m.group("tail")))


def said_plainly(text: str, context: Context | JSONDict | None) -> str:
    """``text`` as the readers take it: without the 对了 opening an afterthought, and at a yes/no question with a
    clause that agrees by naming the action asked about (确认改签 at a change's read-back, 机票确认取消 at a
    cancellation's question) said as a plain 确认; 确认取消 at a booking's read-back is a plain 不了."""
    text = without_afterthought_marker(text)
    ctx = context if isinstance(context, Context) else Context.from_dict(context)
    asked = {"confirm_cancel": "cancel", "confirm_booking": "change" if ctx.state.get("rebooking") else "book"}
    action = asked.get(ctx.open_question or "")
    if not action or not text or ASKS.search(text):
        return text
    pieces = _clauses(text)
    if any(q for _c, q in pieces):
        return text
    out = []
    for clause, _q in pieces:
        body = FILLER.sub("", clause).strip() or clause
        if _named_yes(body, action):
            out.append("确认")
        elif action != "cancel" and re.fullmatch(rf"{_YES}[，,\s]*(?:就|那就)?取消(?:吧|了|啊|呀)*", body):
            out.append("不了")  # 确认取消 when asked to book: no
        else:
            out.append(clause)
    return "，".join(out)


def _understand(text: str, context: Context | JSONDict | None, gaz: Gazetteer, today: dt.date) -> list[Act]:
    ctx = context if isinstance(context, Context) else Context.from_dict(context)
    text = said_plainly(text, ctx)
    if ctx.open_question == "confirm_cancel":  # a yes/no is expected, as after a read-back
        live = [b for b in ctx.bookings if b.get("status") != "cancelled"]
        domain = ctx.domain or (text_or_none(live[-1]["domain"]) if live else None)
        ctx = Context(domain, "confirm_booking", [], ctx.state, ctx.bookings, None)
    raw = text
    text = _normalise(text, gaz)
    if not text or re.fullmatch(r"[\s\W_]*", text):
        return [Act("out_of_scope")]
    english = _is_english(text)
    clauses = [_Clause(t, q) for t, q in _clauses(text)]
    hotelish = _hotelish(text, ctx, gaz, english)
    fresh = ctx.open_question in (None, "anything_else") or not ctx.domain
    whole = parse(text, gaz, today)
    negated = list(whole.negated_cities)
    change_said = bool(re.search(r"(actually|instead|change|i mean|改成|换成|改到|换到|不对|不是)", text.lower()))
    base_date = (
        _dates(re.sub(r"(第二天|次日|隔天)", "", text), today, english, {}).get("date")
        if re.search(r"(第二天|次日|隔天)", text)
        else None
    )
    acts: list[Act] = []
    confirmed = restated = False
    pending_ref: JSONDict = {}
    for i, clause in enumerate(clauses):
        kind, slots = _classify(
            clause, ctx, gaz, today, english, hotelish, confirmed, i == 0, (negated, base_date, change_said), text
        )
        if kind == "reference":
            pending_ref = slots
            continue
        if kind == "request" and pending_ref and not any(slots.get(k) not in (None, "?") for k in REFERENCE):
            slots = {**slots, **pending_ref}
        if kind is None:
            if (
                i == 0
                and len(clauses) > 1
                and not english
                and ctx.open_question not in ("confirm_booking", "offer_alternative", "confirm_cancel")
                and _says_else(FILLER.sub("", clause.text), gaz)
            ):
                acts.append(Act("out_of_scope"))  # 刚开完会，帮我看看…: an aside next to the request
            continue
        if kind in ("confirm", "select"):
            confirmed = True
        if kind in ("inform", "modify", "mixed") and "relative" not in slots:
            inform, modify = _split_changes(slots, ctx, fresh or confirmed)
            restated = restated or not (inform or modify)
            for act_name, group in (("modify", modify), ("inform", inform)):
                if group:
                    acts.append(Act(act_name, group))
            continue
        acts.append(Act(kind, slots))
        if kind == "request" and slots:
            pending_ref = {k: v for k, v in slots.items() if k in REFERENCE and v != "?"}
    acts = _post(acts, ctx, raw)
    if restated and ctx.open_question == "offer_alternative" and [a.act for a in acts] == ["deny"]:
        # 不是，我要上午的: the alternative refused and the conditions said again, which have none
        acts.append(Act("request", {"availability": "?"}))
    said = re.sub(r"^[啊嗯咦哎诶呃额哈欸]+[？?，,！!。\s]*", "", text)  # 啊？我说的是…: an interjection, no question
    if not acts and restated and not re.search(r"(什么|怎么|为什么|哪|吗|呢|？|\?)", said):
        return [Act("inform")]  # the request said again, nothing new: not out of scope
    return acts or [Act("out_of_scope")]


def _hotelish(text: str, ctx: Context, gaz: Gazetteer, english: bool) -> bool:
    """Whether constraints without a domain word are about a hotel."""
    whole_domain = _domain_named(text, english)
    return whole_domain == "hotel" or (
        whole_domain is None
        and (
            (ctx.domain == "hotel" and ctx.open_question not in ("anything_else",))
            or bool(re.search(r"(入住|退房|住\S{0,3}晚|[0-9一二两三四五]\s*间|星级|五星|四星|三星|[区]的?$)", text))
            or (_district_of(text, gaz, None) is not None and not re.search(r"(到|飞|去)", text))
        )
    )


def slots_for(act: str, text: str, context: Context, gaz: Gazetteer, today: dt.date, by_sound: bool = True) -> JSONDict:
    """The slots ``act`` would carry for the whole of ``text`` (when another reader than the cue words decided
    the act, e.g. ``ragdial.task.act_model``): constraints for inform/modify, reference slots for select, the
    attribute asked for request, the domain for a booking question, none for the others."""
    token = _BY_SOUND.set(by_sound)
    try:
        text = _normalise(text, gaz)
        english = _is_english(text)
        body = FILLER.sub("", text).strip() or text
        if act == "ask_about_booking":
            return _booking_domain(body)
        if act == "cancel_booking":
            return _cancel_slots(body, context) or {}
        if act == "change_booking":
            return _change_slots(body, context, gaz, today, english) or {}
        if act == "request":
            return _request_slots(body, context, gaz, english) or {}
        if act == "select":
            return _reference(body, context, gaz, english) if context.offers else {}
        if act in ("inform", "modify"):
            slots = _constraints(body, context, gaz, today, english, _hotelish(body, context, gaz, english))
            fresh = context.open_question in (None, "anything_else") or not context.domain
            inform, modify = _split_changes(slots, context, fresh)
            mine, other = (inform, modify) if act == "inform" else (modify, inform)
            return mine or other
        return {}
    finally:
        _BY_SOUND.reset(token)


def _classify(
    clause: _Clause,
    ctx: Context,
    gaz: Gazetteer,
    today: dt.date,
    english: bool,
    hotelish: bool,
    confirmed: bool,
    first: bool,
    extra: tuple[list[str], str | None, bool] = ([], None, False),
    whole: str = "",
) -> tuple[str | None, JSONDict]:
    text = FILLER.sub("", clause.text).strip() or clause.text
    lower = text.lower()
    greeted = GREETING.fullmatch(text.replace(" ", "")) and re.search(
        r"(好|hello|hi|hey|哈喽|哈罗|嗨|喂|在|有人|早安|午安|哈啰|早)", lower
    )
    if greeted or re.fullmatch(r"(hello|hi|hey|good (morning|afternoon|evening))( there)?[!.~]*", lower):
        return "greeting", {}
    if re.fullmatch(r"no,?\s*thanks?( you)?", lower):
        return "deny", {}
    if (
        THANKS.search(text)
        and len(
            re.sub(
                r"(谢谢|谢啦|谢了|感谢|多谢|辛苦了?|麻烦你了|麻烦了|拜拜|再见|回头见|好嘞|好的|好|嗯|ok|thanks?|thx|ty|you|bye|"
                r"a lot|so much|very much|"
                r"3q|886|88|非常|太|真是|真|你|您|啦|啊|呀|哈|哦|了|的|啦|小助手|没事了|就这样|!|！|~|，|,|。|\s)",
                "",
                lower,
            )
        )
        <= 1
    ):
        return "thanks", {}
    cancel = _cancel_slots(text, ctx)
    if cancel is not None:
        return "cancel_booking", cancel
    change = _change_slots(text, ctx, gaz, today, english)
    if change is not None:
        return "change_booking", change
    if ASK_BOOKING.search(text) and not re.search(r"(帮我订|我要订|我想订|给我订|把.{1,24}订上)", text):
        return "ask_about_booking", _booking_domain(text)
    if (
        ctx.open_question in ("offer_alternative", "change")
        and NONE_ASKED.search(text)
        and (clause.question or re.search(r"(吗|么|啊|呀|嘛|呢)$", text))
    ):
        return "request", {"availability": "?"}  # 上午的一班都没有吗？ (the search said none): asked, not out of scope
    if OOS.search(text) and not _travel_request(text):
        return "out_of_scope", {}
    if re.fullmatch(r"[\d\s]{5,}", text):
        return "out_of_scope", {}
    relative = _relative(text, ctx, clause.question)
    if relative is not None:
        kind, found = relative
        if kind == "modify":  # 那晚上的有没有更便宜的: the window said comes with the bound
            said = _constraints(text, ctx, gaz, today, english, hotelish, *extra)
            found = {**{k: v for k, v in said.items() if k not in found and k != "max_price"}, **found}
        return kind, found
    said = _constraints(text, ctx, gaz, today, english, hotelish, *extra) if DROP_CUE.search(text) else {}
    drops = _drops(
        text, whole or text, ctx, said, lambda: _constraints(whole or text, ctx, gaz, today, english, hotelish, *extra)
    )
    if drops is not None:  # 不限预算 / 别的时间也行 / 五星级多少钱都行: taken back, the others said are kept
        return ("modify" if drops else "inform"), {**drops, **said}
    request = _request_slots(text, ctx, gaz, english)
    if request is not None:
        return "request", request
    oq = ctx.open_question
    deny = DENY.fullmatch(text) or (
        DENY_START.match(text) and not _has_constraints(text, gaz, english) and not NEGATED_CLASS.search(text)
    )
    if deny and oq in ("choose_cancel", "choose_change"):
        return "deny", {}
    if deny and oq in ("confirm_booking", "offer_alternative", "anything_else", "choose_offer", None) and ctx.domain:
        return "deny", {}
    if CORRECTION.fullmatch(text.strip("，,。 ")):
        return "deny", {}
    asking = _asks(text, clause.question)
    if oq == "confirm_booking":  # 第二个 during a read-back: another listed offer is read back (no yes yet)
        m = ORDINAL.search(text)
        word = m and (m.group(1) or m.group(2) or m.group(3))
        ordinal = word and (
            {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}.get(word.lower()) or cn_number(word)
        )
        if ordinal:
            return "select", {"ordinal": ordinal}
        said = {k: v for k, v in _reference(text, ctx, gaz, english).items() if k in ("code", "dep_time")}
        if said and not asking and any(all(o.get(k) == v for k, v in said.items()) for o in ctx.offers):
            return "select", said  # "MU3999" / "12点10分那个" again during its read-back: the same offer, no yes
    code = _code_of(text)
    if code and ctx.domain and code_domain(code) != ctx.domain:
        # 先把G4990二等座订了 while hotels are listed: a request for that train, not a choice among the hotels
        said = _constraints(text, ctx, gaz, today, english, False, *extra)
        said = {k: v for k, v in said.items() if k not in ("city", "nights", "rooms", "stars", "min_stars")}
        return "inform", {**said, "domain": code_domain(code), "code": code}
    if oq in ("choose_offer", "offer_alternative") and ctx.offers:
        ref = _reference(text, ctx, gaz, english)
        if oq == "offer_alternative" and not set(ref) - {"district", "brand", "seat_class", "berth", "airline"}:
            ref = {}  # naming a district or class again while an alternative is offered restates the request
        if ref and re.search(r"(不要|不是|别要|不想要)", text) and not ORDINAL.search(text):
            return None, {}  # 滨江那个不要: what is not wanted is no choice
        if ref and _is_choice(ref, text, ctx):
            return ("reference" if clause.question else "select"), ref
    if (oq in ("confirm_booking", "offer_alternative") or (confirmed is False and oq == "choose_offer")) and (
        CONFIRM.fullmatch(text) or (oq == "offer_alternative" and CONFIRM_START.match(text))
    ):
        if asking:  # "确定？" / "ok?" / "好不好": a question about the offer, not a yes
            return ("request" if oq != "choose_offer" else None), {}
        if oq == "choose_offer":
            if re.search(r"(订吧|确定|确认|订$|book it|就订)", text):
                return "confirm", {}
            return None, {}
        return "confirm", {}
    if oq == "choose_offer" and confirmed and CONFIRM.fullmatch(text) and not re.fullmatch(r"[嗯恩哦啊额呃]+", text):
        return "confirm", {}  # 第一个，没问题，下单 / 就浦东那个，行: a yes after the choice
    if oq == "choose_offer" and re.search(r"(订吧|确定|确认|book it)", text) and CONFIRM.fullmatch(text) and not asking:
        return "confirm", {}
    if oq in ("confirm_booking",) and re.fullmatch(r"(就这个|就它|这个|就这家|就这趟)(吧|了)?", text) and not asking:
        return "confirm", {}
    refusal = NEGATED_PERIOD.match(text)
    if refusal and ctx.domain in ("flight", "train"):
        refused = PERIOD_WORDS.get(refusal.group(1) or refusal.group(2) or "")
        if oq == "offer_alternative":
            return "deny", {}  # 下午不行 when flights in the afternoon are offered instead
        if refused and ctx.state.get("period") == refused:
            return "modify", {"period": None}
        return None, {}
    slots = _constraints(text, ctx, gaz, today, english, hotelish, *extra)
    if slots and not english and _aside(text, gaz, set(slots) <= INCIDENTAL):
        return "out_of_scope", {}  # 我下周一要去体检 / 明天是周三吧: a date or city said in passing changes nothing
    if slots:
        return "inform", slots
    if oq in ("confirm_booking", "offer_alternative") and CONFIRM_START.match(text) and not asking:
        return "confirm", {}
    if (
        oq in ("confirm_booking", "offer_alternative")
        and asking
        and len(text) <= 16
        and re.match(r"(好|行|可|对|是|确|嗯|恩|ok|yes|妥|没问题|没毛病|没错|就|真|sure|right|correct|is|are)", lower)
    ):
        return "request", {}  # 是吗 / 就这个吗 / 真的吗 / is that right?: checked, not agreed
    # no cue word known: a short clause with no slots read by its polarity where a yes/no is expected
    if oq in ("confirm_booking", "offer_alternative", "anything_else") and len(text) <= 8 and not clause.question:
        numbers = re.search(r"[0-9零一二两三四五六七八九十间张晚号点]", text)
        if re.match(r"(不要|不用|不订|别订|算了|取消|不了|没有了|没了|不需要|不想|no\b|nope|cancel)", lower) and not (
            NEGATED_CLASS.search(text)
        ):
            return "deny", {}
        if (
            oq != "anything_else"
            and len(text) <= 4
            and not numbers
            and not asking
            and re.match(rf"(好{EXCLAIMED}|行|可以|对|是|确|嗯|恩|ok|yes|妥|没问题|没毛病|没错)", lower)
        ):
            return "confirm", {}
    return None, {}


def _cancel_slots(text: str, ctx: Context) -> JSONDict | None:
    """Slots of a request to cancel a booking made in this session (``domain``, ``order_no``), or None."""
    if not ctx.bookings:  # (a booking cancelled already still makes 取消那张票 a cancellation, refused then)
        return None
    numbers = re.findall(r"\d+", text)
    order = next((int(n) for n in numbers if any(str(b.get("order_no")) == n for b in ctx.bookings)), None)
    slots: JSONDict = dict(_booking_domain(text))
    if order is not None:
        slots["order_no"] = order
    if ctx.open_question == "choose_cancel":  # which one: a domain, an order number or an ordinal names it
        m = re.search(rf"第\s*({NUM})\s*(?:个|张|笔|单)?", text)
        if m and not slots:
            slots["ordinal"] = cn_number(m.group(1))
        return slots if slots or CANCEL.search(text) else None
    if not CANCEL.search(text) or re.search(r"(不取消|别取消|不用取消|不要取消|不退|别退)", text):
        return None
    if ctx.open_question in ("confirm_booking", "offer_alternative", "choose_offer"):
        return slots if (MADE_MARK.search(text) or order is not None) else None
    return slots if (BOOKED_MARK.search(text) or order is not None) else None


def _change_slots(text: str, ctx: Context, gaz: Gazetteer, today: dt.date, english: bool) -> JSONDict | None:
    """Slots of a request to change (改签) a booking made in this session: which one (``domain``, ``order_no``)
    and the new values said with it (date, departure window, class, berth, nights, rooms), or None."""
    live = [b for b in ctx.bookings if b.get("status") != "cancelled"]
    if not live or ctx.open_question in ("confirm_cancel", "choose_cancel"):
        return None
    if ctx.open_question == "choose_change":  # which booking to change: a domain, an order number or an ordinal
        numbers = re.findall(r"\d+", text)
        named: JSONDict = dict(_booking_domain(text))
        order_no = next((int(n) for n in numbers if any(str(b.get("order_no")) == n for b in live)), None)
        if order_no is not None:
            named["order_no"] = order_no
        m = re.search(rf"第\s*({NUM})\s*(?:个|张|笔|单)?", text)
        if m and not named:
            named["ordinal"] = cn_number(m.group(1))
        if named:
            return named
    said = bool(REBOOK.search(text)) or bool(REBOOK_VERB.search(text) and BOOKED_THING.search(text))
    if not said and ctx.open_question in ("anything_else", None) and not _domain_named(text, english):
        # right after a booking: 改到后天吧 / 我8号去不了了，能改到9号吗 changes it
        said = bool(re.search(r"(改|换|调)\s*(到|成|为)", text)) and bool(
            _dates(text, today, english, {}) or _time_bounds(text, english) != (None, None) or _period_of(text, english)
        )
    if not said or re.search(r"(不改|别改|不用改|不要改)", text):
        return None
    numbers = re.findall(r"\d+", text)
    order = next((int(n) for n in numbers if any(str(b.get("order_no")) == n for b in live)), None)
    slots: JSONDict = dict(_booking_domain(text))
    if order is not None:
        slots["order_no"] = order
        text = text.replace(str(order), " ")
    domain = text_or_none(
        slots.get("domain")
        or next((b["domain"] for b in reversed(live) if order is None or b["order_no"] == order), None)
    )
    m = re.search(r"(改|换|调)\s*(到|成|为)", text)
    if m and _dates(text[m.end() :], today, english, {}):  # 我8号去不了了，能改到9号吗: the date after the verb
        text = text[m.end() :]
    slots.update(_dates(text, today, english, {}))
    time_from, time_to = _time_bounds(text, english)
    if time_from or time_to:
        slots.update({k: v for k, v in (("time_from", time_from), ("time_to", time_to)) if v})
    elif (
        (domain != "hotel" or "domain" not in slots)
        and _period_of(text, english)
        and any(b.get("domain") != "hotel" for b in live)  # (a time of day changes a trip, not a stay)
    ):
        slots["period"] = _period_of(text, english)
    value = _class_value(_classes_of(text, english), text, domain)
    if value is not None:
        slots["seat_class"] = value
    berth = _berths_of(text, english)
    if berth:
        slots["berth"] = berth
    if domain == "hotel":
        slots.update({k: v for k, v in _hotel_numbers(text, english).items() if k in ("nights", "rooms")})
    return slots


def _relative(text: str, ctx: Context, question: bool) -> tuple[str, JSONDict] | None:
    """A relative preference against the offers on the table. Choosing among listed offers (便宜点的那个) is a
    ``select`` by feature; asking for one beyond them, or against the offer read back (有没有便宜点的？), is a
    ``modify`` with the bound it implies (``relative`` names it, so the manager can say when nothing is left)."""
    oq = ctx.open_question
    if oq not in ("choose_offer", "confirm_booking", "offer_alternative") or not ctx.offers:
        return None
    if re.search(r"(没关系|无所谓|也行|也可以|都行|不要紧|not a problem|don't mind)", text):
        return None
    kind = next((k for pattern, k in RELATIVE if re.search(pattern, text, re.I)), None)
    if kind is None or re.search(r"(最便宜|最贵|最早|最晚|最好)", text):
        return None
    beyond = question or bool(
        re.search(r"(有没有|还有|有.{0,3}吗|能不能|可以.{0,3}吗|换个|换一个|再找|再查|any|is there)", text)
    )
    if oq == "choose_offer" and len(ctx.offers) > 1 and not beyond:
        return "select", {"feature": RELATIVE_FEATURE[kind]}
    prices = [as_int(o["price"]) for o in ctx.offers if o.get("price") is not None]
    times = sorted(str(o["dep_time"]) for o in ctx.offers if o.get("dep_time"))
    stars = [as_int(o["stars"]) for o in ctx.offers if o.get("stars")]
    slots: JSONDict = {"relative": kind}
    if kind == "cheaper" and prices:
        slots["max_price"] = min(prices) - 1
    elif kind == "pricier" and stars and ctx.domain == "hotel" and re.search(r"(好|档次|星)", text):
        slots["min_stars"] = max(stars) + 1
    elif kind == "pricier" and prices:
        slots["min_price"] = max(prices) + 1
    elif kind == "earlier" and times:
        slots["time_to"] = times[0]
    elif kind == "later" and times:
        hour, minute = map(int, times[-1].split(":"))
        total = hour * 60 + minute + 1
        slots["time_from"] = f"{total // 60:02d}:{total % 60:02d}"
    else:
        return None
    return "modify", slots


def _is_choice(ref: JSONDict, text: str, ctx: Context) -> bool:
    """Whether reference slots pick among the offers: a class or berth no offer has, or said with 换/改/还是,
    is a new constraint (换软卧), not a choice."""
    if set(ref) - {"seat_class", "berth", "airline", "district", "brand"}:
        return True
    if re.search(r"(换|改|还是|没有就|太贵|太慢|有没有|有吗|还有|有.{0,6}吗|[从到飞去](?=[\u4e00-\u9fff]{2}))", text):
        return False  # 换软卧 / 成都飞上海的经济舱有没有: a request said again or changed, not a choice
    for key, value in ref.items():
        if not any(offer.get(key) == value for offer in ctx.offers):
            return key in ("airline", "district", "brand")
    # 高铁二等座 when every listed train is 二等座: the request said again, not a choice
    return len(ctx.offers) <= 1 or not all(all(o.get(k) == v for k, v in ref.items()) for o in ctx.offers)


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
# travel words of two or more characters, also matched by sound when the residue of a clause is computed
# (该道7号 heard for 改到7号 says nothing else)
TRAVEL_PHRASES = [
    "改到", "改成", "换到", "换成", "改为", "帮我", "看看", "看下", "那个", "这个", "那班", "这班", "那趟", "这趟",
    "那家", "这家", "出发", "回来", "酒店", "宾馆", "机票", "车票", "火车", "高铁", "动车", "航班", "飞机", "订票",
    "预订", "住宿", "入住", "退房", "今天", "明天", "后天", "周末", "晚上", "上午", "下午", "早上", "中午", "以内",
    "以后", "以前", "左右", "就行", "可以", "要求", "预算",
]  # fmt: skip
DATE_WORDS = re.compile(
    rf"(大后天|后天|明天|今天|今晚|明晚|明早|明儿|今儿|(下下|下|这|本)?(个)?(周|星期|礼拜)[一二三四五六日天末1-7]?|"
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
    r"[号日天]\s*是\s*.{0,2}几\s*[？?]?$|充\s*\d+|充.{0,3}(块|元))"
)
ASIDE = re.compile(
    r"(心情|好累|累死|烦死|困死|加班|开会|有个会|体检|考试|面试|上班|上课|放学|睡懒觉|演唱会|步数|停运|号线|"
    r"刮.{0,2}风|带伞|雪|收了|收盘|涨到|跌到|黄金|值得|零下|[0-9一二两三四五六七八九十]\s*度|"
    r"几岁|生日|纪念日|结婚|下班了|到家了|起床|吃饭|午饭|晚饭|早饭)"
)


def _aside(text: str, gaz: Gazetteer, incidental: bool = True) -> bool:
    """Whether a clause that names a date, time, city or number is an aside, not a constraint: a form that is
    always an aside (我在武汉 / 明天是周三吧 / 上次…), a topic that is not travel in a clause naming no trip
    (我后天要开会, but 我后天去上海开会 is a trip), or, with no travel verb, domain or route in it, words left
    after the names, dates, numbers and travel words are taken away (我下周一要去体检)."""
    lower = text.lower()
    if ASIDE_FORM.search(lower):
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
    if re.search(r"(机票|航班|飞机)", text):
        return {"domain": "flight"}
    if re.search(r"(火车|高铁|动车|车票|的车|车来着|卧铺)", text):
        return {"domain": "train"}
    if re.search(r"(酒店|宾馆|房间)", text):
        return {"domain": "hotel"}
    return {}


def _has_constraints(text: str, gaz: Gazetteer, english: bool) -> bool:
    p = parse(text, gaz, dt.date(2026, 12, 1))
    return bool(p.cities or p.date or p.seat_class or p.berths or _domain_named(text, english))


def _request_slots(text: str, ctx: Context, gaz: Gazetteer, english: bool) -> JSONDict | None:
    lower = text.lower()
    if re.search(r"(太|有点|有些|稍微|略)(贵|高|慢|晚|早|远|差)", text) and not _asks(text, False):
        return None  # 出发时间有点早: a comment on the offer, no question
    wanted: list[str] = []
    for pattern, slot in REQUEST_CUES:
        if re.search(pattern, lower):
            if slot == "price" and (
                re.search(r"(多少度|多少钱以内)", text) or wanted or _price_of(text, None, english) is not None
            ):
                continue
            if slot == "district" and not (
                re.search(r"(哪个区|在哪|位置|which district|where)", lower) or _district_of(text, gaz, None)
            ):
                continue
            wanted.append(slot)
    if not wanted:
        if re.search(r"(落地|降落).{0,3}(还是)", text):
            wanted.append("arr_place")
        else:
            return None
    if "seats_left" in wanted and ctx.domain == "hotel":
        wanted = ["rooms_left" if w == "seats_left" else w for w in wanted]
    if "seats_left" in wanted and (
        ctx.open_question in (None, "anything_else")
        or (
            _dates(text, dt.date(2026, 12, 1), english, {})
            and ctx.open_question not in ("choose_offer", "confirm_booking")
        )
    ):
        return None  # "下周末从沈阳飞上海还有票吗" asks for a search, not a seat count
    if not ctx.offers and ctx.open_question in (None, "anything_else") and _has_constraints(text, gaz, english):
        return None  # 明天武汉飞北京的机票多少钱: a search (the list shows the prices), not a question about an offer
    slots: JSONDict = (
        {w: "?" for w in wanted[:1]} if "price" in wanted and len(wanted) > 1 else {w: "?" for w in wanted}
    )
    if ctx.offers:
        slots.update(_reference(text, ctx, gaz, english, asking=set(slots)))
    return slots


def _reference(text: str, ctx: Context, gaz: Gazetteer, english: bool, asking: set[str] | None = None) -> JSONDict:
    """Reference slots naming one of the listed offers (ordinal, code, brand, price, time, feature, this)."""
    asking = asking or set()
    lower = text.lower()
    ref: JSONDict = {}
    heard = canonical(text)
    m = re.search(rf"第\s*({NUM})\s*(?:个|趟|班|家|项|种|张)?(?!天)", text) or re.search(
        rf"第\s*({NUM})\s*(?:个|趟|班|家)", heard
    )
    if m:
        ref["ordinal"] = cn_number(m.group(1))
    elif re.search(r"(最后一个|最后那个|最后一家|最后那家|最后一趟|最后那趟|最后那班|最后一班|the last)", lower):
        ref["ordinal"] = -1
    elif re.search(r"中间(那|的|一)(个|趟|班|家)", text) and len(ctx.offers) % 2 == 1:
        ref["ordinal"] = (len(ctx.offers) + 1) // 2
    else:
        m = re.fullmatch(r"(?:选|要|订|就)?\s*([1-9一二三四五])\s*(?:号)?(?:吧|的|那个)?", text) or re.search(
            r"\b(first|second|third|fourth)\b(?! class)", lower
        )
        if m:
            ref["ordinal"] = {"first": 1, "second": 2, "third": 3, "fourth": 4}.get(m.group(1)) or cn_number(m.group(1))
    code = _code_of(text)
    if code:
        ref["code"] = code
    if "brand" not in asking:
        brand = _brand_of(text, gaz)
        if brand:
            ref["brand"] = brand
    if "district" not in asking and ctx.domain == "hotel":
        district = _district_of(text, gaz, None)
        if district and (not asking or not ref):
            ref["district"] = district
    if "airline" not in asking:
        airline = _airline_of(text, gaz)
        if airline:
            ref["airline"] = airline
    if "seat_class" not in asking:
        classes = [c for c in _classes_of(text, english) if c not in ("卧铺", "business", "first")]
        if classes:
            ref["seat_class"] = classes[0]
    berth = _berths_of(text, english)
    if berth and "berth" not in asking and isinstance(berth, str):
        ref["berth"] = berth
    for pattern, feature in (
        (r"最便宜|最低价|便宜的那|便宜那|cheapest", "cheapest"),
        (r"最贵|most expensive", "most_expensive"),
        (r"最早|earliest", "earliest"),
        (r"最晚|最迟|latest", "latest"),
        (r"最快|时间最短|用时最短|fastest", "fastest"),
        (r"最好|星级最高|best", "best"),
    ):
        if re.search(pattern, lower):
            ref["feature"] = feature
            break
    if not ref.get("code") and not CLOCK_RANGE.search(text):  # (下午3点到6点 is a window, no offer's time)
        m = re.search(r"(\d{1,2})[:：](\d{2})", text)
        clock = None
        if m:
            clock = f"{int(m.group(1)):02d}:{m.group(2)}"
        else:
            m = re.search(
                rf"(凌晨|早上|上午|中午|下午|傍晚|晚上)?\s*({NUM})\s*点\s*(半|一刻|三刻|({NUM})\s*分?)?(?=的|那|$|吧|班|趟|个)",
                text,
            )
            if m:
                hour = cn_number(m.group(2)) or 0
                extra = m.group(3) or ""
                minute = {"半": 30, "一刻": 15, "三刻": 45}.get(extra)
                if minute is None:
                    minute = cn_number(m.group(4)) if m.group(4) else 0
                period = m.group(1)
                if (
                    period is None
                    and 1 <= hour <= 6
                    and any(str(o.get("dep_time", "")).startswith(f"{hour + 12:02d}") for o in ctx.offers)
                ):
                    period = "下午"
                clock = _clock(hour, minute or 0, period)
        if clock:
            ref["dep_time"] = clock
    if "price" not in asking and not {"ordinal", "dep_time", "code"} & set(ref):
        m = re.search(rf"({NUM})\s*(?:块钱|块|元)?\s*(?:的|那)", text) or re.fullmatch(
            rf"(?:订|就|要)?\s*({NUM})\s*(?:块钱|块|元)?(?:吧)?", text
        )
        if m:
            value = cn_number(m.group(1))
            if value and (value >= 50 or any(o.get("price") == value for o in ctx.offers)):
                ref["price"] = value  # (订44那个: a low price that is listed)
    if (
        not ref
        and re.search(r"(就它|就这个|这个吧|就这家|这家|这趟|这班|就那个|that one|this one|^这个$|就这样)", lower)
        and not re.search(r"这个(座位|房间|酒店|航班)", text)
    ):
        ref["ref"] = "this"
    if (
        ref.get("ref") is None
        and re.search(r"(这趟|这班|这个$|这个[吗呢]|^这个|这家)", text)
        and asking
        and not any(k in ref for k in ("ordinal", "code", "brand", "airline", "feature"))
        and not re.search(r"这个(座位|房间)", text)
    ):
        ref["ref"] = "this"
    return ref


def _constraints(
    text: str,
    ctx: Context,
    gaz: Gazetteer,
    today: dt.date,
    english: bool,
    hotelish: bool,
    negated_elsewhere: list[str] = (),  # type: ignore[assignment]
    base_date: str | None = None,
    change_said: bool = False,
) -> JSONDict:
    """Constraint slots a clause states (before deciding inform vs modify)."""
    slots: JSONDict = {}
    fallback = FALLBACK.search(text)
    if fallback:  # 五星没有的话四星也行: the value after the condition is the one wanted
        text = text[fallback.end() :]
        if not re.sub(r"[，,。\s吧呢啊]", "", text):
            return {}  # 五星级没有的话，… : the condition alone names what failed, not what is wanted
    p = parse(text, gaz, today)
    if re.search(r"(太|有点|有些|稍微|略)(贵|慢|晚|早|远|累|麻烦|折腾|差)", text) and not re.search(r"(改|换)", text):
        return {}  # "商务舱太贵了", "卧铺太慢了": the reason for a change, not a constraint
    domain = _domain_named(text, english)
    if domain:
        slots["domain"] = domain
    oq = ctx.open_question
    cities = list(p.cities)
    roles = {role for _c, role in cities if role}
    trip = bool(roles) or len(cities) > 1 or bool(re.search(r"(回程|返程|往返)", text))
    if ctx.domain == "hotel" and oq != "anything_else" and roles <= {"arr"} and len(cities) <= 1:
        trip = False  # "换到重庆吧" while choosing a hotel moves the hotel
    target = domain or ("hotel" if hotelish and not trip else None)
    if target is None:
        target = (
            "train" if trip and ctx.domain == "hotel" else (ctx.domain if oq != "anything_else" or not trip else None)
        )
    hotel = target == "hotel"
    negated = list(p.negated_cities) + [c for c in negated_elsewhere if c not in p.negated_cities]
    if (
        cities
        and not roles
        and not hotel
        and oq not in ("dep_city", "arr_city", "city")
        and not negated
        and not re.search(CHANGE_CUES, text)
        and not change_said
        and len(cities) == 1
        and not (_dates(text, today, english, {}) or _classes_of(text, english))
    ):
        cities = []  # "我在武汉": a city said in passing is no constraint
    for city, role in cities:
        place = p.places.get(city)
        if hotel:
            slots["city"] = city
            continue
        if role is None:
            if oq in ("dep_city", "arr_city"):
                role = "dep" if oq == "dep_city" else "arr"
            elif re.search(r"(目的地|到达地|终点)", text):
                role = "arr"
            elif re.search(r"(出发地|起点|出发站)", text):
                role = "dep"
            elif negated:
                negated_role = (ctx.state.get("dep_city") == negated[0] and "dep") or "arr"
                role = negated_role
            elif change_said and ctx.state.get("last_city_slot") in ("dep_city", "arr_city"):
                role = "dep" if ctx.state["last_city_slot"] == "dep_city" else "arr"
            elif ctx.state.get("dep_city") and not ctx.state.get("arr_city"):
                role = "arr"
            elif (ctx.state.get("arr_city") and not ctx.state.get("dep_city")) or (
                len(cities) == 1 and re.search(r"(出发|走)", text)
            ):
                role = "dep"
            else:
                role = "arr" if "dep_city" in slots else ("dep" if len(cities) > 1 else "arr")
        key = "dep" if role == "dep" else "arr"
        slots[f"{key}_city"] = city
        if place:
            slots[f"{key}_place"] = place
    slots.update(_dates(text, today, english, ctx.state))
    if "date" not in slots and re.search(r"(第二天|次日|隔天)", text) and (base_date or ctx.state.get("date")):
        base = dt.date.fromisoformat(base_date or as_str(ctx.state["date"]))
        slots["date"] = (base + dt.timedelta(days=1)).isoformat()
    if "date" not in slots and SAME_DAY.search(text):  # 同一天 / 当天: the day of the trip talked about
        known = [ctx.state.get("date")] + [b.get("date") for b in reversed(ctx.bookings)]
        day = next((d for d in known if isinstance(d, str) and d), None)
        if day:
            slots["date"] = day
    time_from, time_to = _time_bounds(text, english)
    if time_from or time_to:
        if time_from:
            slots["time_from"] = time_from
        if time_to:
            slots["time_to"] = time_to
    elif not hotel:
        period = _period_of(text, english)
        said = {PERIOD_WORDS[w] for _s, _e, w in _find(text, list(PERIOD_WORDS))} if not english else set()
        if len(said) > 1 and re.search(r"(或|也行|都行|都可以|和|跟|还是)", text):
            # 下午晚上的也行: one window from the earliest start to the latest end of the periods said
            slots["time_from"] = min(WINDOWS[p][0] for p in said)
            slots["time_to"] = max(WINDOWS[p][1] for p in said)
        elif period:
            slots["period"] = period
    classes = _classes_of(NEGATED_CLASS.sub(" ", text), english)  # 不要经济舱，公务舱的话…: not the refused one
    value = _class_value(classes, text, target)
    if value is not None:
        slots["seat_class"] = value
    berth = _berths_of(text, english)
    if berth:
        slots["berth"] = berth
    kinds = _kinds_of(text)
    if kinds and re.search(r"(也行|也可以|也成|也没问题)", text) and ctx.state.get("train_kinds"):
        asked = [str(kind) for kind in items(ctx.state["train_kinds"])]
        kinds = sorted({*asked, *kinds}, key="GDZTK".find)  # 动车也行: as well as the kind asked
    if kinds:
        slots["train_kinds"] = kinds
    airline = _airline_of(text, gaz)
    if airline:
        slots["airline"] = airline
    price = _price_of(text, oq, english)
    if price:
        slots["max_price"] = price
    if hotel:
        stars, min_stars = _stars_of(text, english)
        if stars:
            slots["stars"] = stars
        if min_stars:
            slots["min_stars"] = min_stars
        brand = _brand_of(text, gaz)
        if brand:
            slots["brand"] = brand
        district = _district_of(text, gaz, as_text_or_none(slots.get("city") or ctx.state.get("city")))
        if district:
            slots["district"] = district
        slots.update(_hotel_numbers(text, english))
        if oq == "guests" and "guests" not in slots:
            n = _count(text, rf"({NUM})\s*(?:个)")
            if n:
                slots["guests"] = n
        if oq == "rooms" and "rooms" not in slots:
            n = _count(text, rf"({NUM})\s*间")
            if n:
                slots["rooms"] = n
    else:
        n = _passengers(text, english)
        if n:
            slots["passengers"] = n
        if not slots.get("seat_class") and _stars_of(text, english) != (None, None) and not domain:
            stars, min_stars = _stars_of(text, english)
            slots.update({k: v for k, v in (("stars", stars), ("min_stars", min_stars)) if v})
    return slots


def _split_changes(slots: JSONDict, ctx: Context, fresh: bool) -> tuple[JSONDict, JSONDict]:
    """(inform, modify) parts: a slot changing a value already known is a modification; a repeated value is
    not labelled (nothing changes), unless this starts a new request."""
    inform: JSONDict = {}
    modify: JSONDict = {}
    state = ctx.state
    new_request = fresh
    for key, value in slots.items():
        if key == "domain":
            if fresh:
                inform[key] = value
            elif ctx.domain and value != ctx.domain:
                modify[key] = value
            continue
        known = state.get(key)
        if new_request or known is None or known == "":
            inform[key] = value
        elif same_value(known, value):
            continue
        else:
            modify[key] = value
    return inform, modify


def same_value(a: JSONValue, b: JSONValue) -> bool:
    """Whether two slot values say the same (a one-item list and its item do)."""
    if isinstance(a, list) or isinstance(b, list):
        return sorted(a if isinstance(a, list) else [a]) == sorted(b if isinstance(b, list) else [b])
    return a == b


def _post(acts: list[Act], ctx: Context, raw: str) -> list[Act]:
    """Join neighbouring clauses with the same act; drop what the acts around a clause make redundant."""
    out: list[Act] = []
    for act in acts:
        prev = out[-1] if out else None
        if (
            prev
            and prev.act == act.act
            and act.act
            in (
                "inform",
                "modify",
                "out_of_scope",
                "greeting",
                "thanks",
                "confirm",
                "deny",
                "select",
                "ask_about_booking",
                "cancel_booking",
                "change_booking",
            )
        ):
            clash = act.act == "inform" and (
                "domain" in act.slots and "domain" in prev.slots and act.slots["domain"] != prev.slots["domain"]
            )
            if not clash:
                for key, value in act.slots.items():
                    known = prev.slots.get(key)
                    if isinstance(known, list) and not isinstance(value, list) and value in known:
                        prev.slots[key] = value  # 卧铺，软卧下铺: the narrower value said after
                    elif key == "train_kinds" and isinstance(known, list) and isinstance(value, list):
                        either = sorted({*map(str, known), *map(str, value)}, key="GDZTK".find)
                        prev.slots[key] = either  # 动车也行…高铁有吗
                    elif key in prev.slots and known is None and value is not None:
                        prev.slots[key] = value  # 下午的不行，我得上午走: the window said replaces the one refused
                    else:
                        prev.slots.setdefault(key, value)
                continue
        out.append(act)
    # "我想改签，改到后天下午": the new values said next to a change of a booking belong to it
    if any(a.act == "change_booking" for a in out):
        change = next(a for a in out if a.act == "change_booking")
        for a in out:
            if a.act in ("inform", "modify"):
                for key, value in a.slots.items():
                    if key != "domain" or "domain" not in change.slots:
                        change.slots.setdefault(key, value)
        out = [a for a in out if a.act not in ("inform", "modify")]
    # "明天去杭州，帮我订西湖区的酒店": the place one goes to is the hotel's city
    for a in out:
        if a.act == "inform" and a.slots.get("domain") == "hotel" and "city" not in a.slots and a.slots.get("arr_city"):
            a.slots["city"] = a.slots.pop("arr_city")
            for key in ("dep_city", "dep_place", "arr_place"):
                a.slots.pop(key, None)
    names = [a.act for a in out]
    # "不对，是从天津出发": a correction with its replacement is a modification, not a refusal
    if (
        "deny" in names
        and ("modify" in names or "inform" in names)
        and re.search(r"(不对|不是|错了|说错)", raw)
        and not re.search(r"(不订|不要|取消|太贵)", raw)
    ):
        out = [a for a in out if a.act != "deny"]
    # "就三点五十那趟，二等座": a class or berth said next to a choice narrows the choice
    if ctx.open_question in ("choose_offer", "offer_alternative") and any(a.act == "select" for a in out):
        choice = next(a for a in out if a.act == "select")
        for a in out:
            narrows = a.act in ("inform", "modify") and a.slots and set(a.slots) <= {"seat_class", "berth"}
            if narrows and all(isinstance(v, str) for v in a.slots.values()):
                for key, value in a.slots.items():
                    choice.slots.setdefault(key, value)
                a.slots = {}
    # accepting a suggestion restates it: the restatement is not a new constraint
    if ctx.open_question == "offer_alternative" and out and out[0].act == "confirm":
        out = [out[0]] + [a for a in out[1:] if a.act not in ("inform", "modify") or _beyond_suggestion(a, ctx)]
    # "哈尔滨的宾馆 道里附近，住两晚": a district, brand or class inside a request is a constraint, not a choice
    if any(a.act in ("inform", "modify") and a.slots for a in out):
        attribute_only = {"district", "brand", "seat_class", "berth", "airline"}
        target = next(a for a in out if a.act in ("inform", "modify") and a.slots)
        elsewhere = target.slots.get("domain") not in (None, ctx.domain)

        def joins(index: int, a: Act) -> bool:
            # "二等座，确定，然后订酒店": a class confirmed, or said before a request for another kind of
            # thing, chooses among the offers listed; it is no constraint of the new request
            confirmed = any(b.act == "confirm" for b in out[index + 1 :])
            return a.act == "select" and set(a.slots) <= attribute_only and not confirmed and not elsewhere

        for index, a in enumerate(out):
            if joins(index, a):
                for key, value in a.slots.items():
                    target.slots.setdefault(key, value)
        out = [a for index, a in enumerate(out) if not joins(index, a)]
    # "早上那个，9点20的": a time of day said with a choice describes the choice, it is no new window
    if ctx.open_question in ("choose_offer", "offer_alternative") and any(a.act == "select" for a in out):
        timing = {"period", "time_from", "time_to"}
        out = [
            a
            for a in out
            if a.act not in ("inform", "modify")
            or not set(a.slots) <= timing
            or any(v is None for v in a.slots.values())
        ]
    # "那就这样吧，不订了": "this one" followed by a refusal is no choice
    if any(a.act == "deny" for a in out):
        first_deny = next(i for i, a in enumerate(out) if a.act == "deny")
        out = [
            a for i, a in enumerate(out) if not (a.act == "select" and a.slots == {"ref": "this"} and i < first_deny)
        ]
    # a select then a bare "this" select is one choice
    if len(out) > 1 and out[0].act == "select":
        merged = [out[0]]
        for a in out[1:]:
            if a.act == "select":
                continue
            merged.append(a)
        out = merged
    # a domain said again while answering within the same task labels nothing
    return [a for a in out if a.act not in ("inform", "modify") or a.slots]


def _beyond_suggestion(act: Act, ctx: Context) -> bool:
    sugg = ctx.suggestion or {}
    return any(
        (k not in sugg and k not in ("period", "max_price", "seat_class", "domain"))
        or (v is None and k not in sugg)
        or (k == "max_price" and v not in (sugg.get(k), ctx.state.get(k)))  # 行吧，1200以内的: a new budget
        for k, v in act.slots.items()
    )
