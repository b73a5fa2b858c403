"""Cue words and patterns the act reader matches (acts, requestable attributes, windows, classes, yes/no, asides)."""

from __future__ import annotations

import re

from ragdial.task.slots import NUM, SEAT_CLASSES, SEAT_CLASSES_EN

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
CLASS_EN = SEAT_CLASSES_EN  # the slot parser's English class names
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
    "特快": ["T"],
    "普通火车": ["K", "T", "Z"],
    "普通列车": ["K", "T", "Z"],
    "绿皮车": ["K", "T", "Z"],
    "绿皮": ["K", "T", "Z"],
}
AIRLINES_EN = {  # English names as patterns (Air China / China Eastern / Eastern / Hainan Airlines / Sichuan Air)
    r"air\s?china": "国航",
    r"(?:china\s)?eastern(?:\sairlines?)?": "东航",
    r"(?:china\s)?southern(?:\sairlines?)?": "南航",
    r"hainan(?:\sair(?:lines?)?)?": "海航",
    r"sichuan\sair(?:lines?)?": "川航",
    r"shenzhen\sair(?:lines?)?": "深航",
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
    r"(订上(?=了|没)|订好|付款了|付好了|扣款了|扣钱了|前面订的|订的东西|刚才的预订|之前的预订|订了吗|订了没|订成功|订成了|出票|成功了没|成功了吗|成功没|订单|我的预订|预订记录|订了哪些|订了什么|订了啥|"
    r"我订的|刚订的|刚才订的|之前订的|刚刚订|上午订的|下午订的|昨天订的|刚才那张|刚才那个|还在吗|还在吧|"
    r"订到了|订到没|买到了|买好了|买到没|订好没|预订成功|下单成功|订单号|预订号|确认号|单号|我的票|我的机票|我的火车票|"
    r"我的酒店|我订了|都订了|订了几|刚才那单|那单|成了没|booking|reservation|my order|order number|my tickets?|"
    r"confirmation number|booked)",
    re.I,
)
OOS = re.compile(
    r"(天气|下雨|下雪|雾霾|多少度|几度|气温|温度|好冷|太冷|很冷|多冷|冷不冷|好热|很热|太热|热不热|短袖|羽绒服|冬天|夏天|"
    r"几号来着|今天几号|几月几号|周几|星期几|礼拜几|几点了|农历|阴历|限行|尾号|"
    r"股票|股市|大盘|指数|比特币|基金|涨了|跌了|涨停|跌停|黄金|金价|油价|上回|上次|"
    r"好吃|火锅|美食|小吃|好玩|景点|园林|好看|海拔|四季|去过|哪年|开通的|历史|"
    r"去年|前年|昨天|前天|上周|上个月|小时候|(?<![点午上晚早凌傍时钟])以前|"
    r"电影|唱歌|唱首|的歌|听歌|音乐|笑话|故事|外卖|写首诗|写诗|你叫什么|名字|你是谁|机器人|你好笨|笨|傻|"
    r"会说英语|英语吗|话费|流量|充值|余额|套餐|宽带|比赛|湖人|赢了|输了|新闻|彩票|"
    r"体育|球赛|足球|篮球|nba|世界杯|电视剧|综艺|明星|星座|翻译|作业|菜谱|做饭|怎么做|减肥|感冒|医院|淘宝|快递|打车|滴滴|"
    r"堵车|路况|地铁|汇率|利率|房价|工资|游戏|宠物|无聊|陪我聊|聊聊天|你喜欢|你几岁|多大了|你是男|你在哪|吃了吗|吃饭了吗|"
    r"刮风|台风|晴天|阴天|下冰雹|穿什么|放假|春节|国庆|过年|攻略|带什么|注意什么|特产|门票|人多吗|有多大|有多少人|"
    r"哈哈|呵呵|啊啊|嘿嘿|是几月|什么节|啤酒节|\bweather\b|"
    r"\bwhat('s| is) (the )?date\b|\bwhat (date|day) (is|was|will)\b|\bwhich day\b|\bis what (date|day)\b|"
    r"\bjoke|\bstocks?\b|\bmovies?\b|\bsongs?\b|\brain\b|\bnews\b)",
    re.I,
)
# questions for a customer-service knowledge base next to the task branch (the demo's carrier): out of scope here
SERVICE_TOPICS = re.compile(r"(话费|流量|套餐|宽带|充值|余额|漫游|携号|营业厅|手机号|号码|信号|账单|积分|5G|4G)")
# the offer asked about in English: it / that one / the second one / the 9 o'clock train
_IT = r"(?:it|that|this|they|that one|this one|the (?:\w+ )?(?:one|flight|train|hotel))"
REQUEST_CUES: tuple[tuple[str, str], ...] = (
    (
        r"(几点|什么时候|啥时候)(能)?(到|落地|抵达|到达)|到达时间|几点到|落地时间|到站.{0,2}几点|"
        rf"(when|what time) (does|do|will) {_IT} (arrive|land|get in)|arrival time",
        "arr_time",
    ),
    (
        r"(几点|什么时候|啥时候)(起飞|出发|发车|开|走)|起飞时间|出发时间|发车时间|几点的|"
        rf"(when|what time) (does|do|will) {_IT} (leave|depart|go)|departure time",
        "dep_time",
    ),
    (r"多久|多长时间|几个小时|几小时|how long", "duration"),
    (r"还有票|还剩几张|剩几张|余票|还有座|还有位|有没有票|any seats|seats left", "seats_left"),
    (r"还有房|还剩几间|剩几间|rooms left", "rooms_left"),
    (
        rf"哪个站上车|哪个站出发|从哪个站|哪个机场(起飞|出发)|从哪个机场|在哪上车|where (does|do|will) {_IT} "
        r"(leave|depart|go|take off) from",
        "dep_place",
    ),
    (
        rf"落地是|到哪个站|哪个机场(落地|降落)|到哪个机场|在哪下车|哪个站下车|"
        rf"where (does|do|will) {_IT} (arrive|land|get in)",
        "arr_place",
    ),
    (r"几星|星级是|星级多少|几颗星|how many stars", "stars"),
    (
        r"哪个区|在哪个区|在哪儿|在哪里|在哪$|在哪[个边啊呀呢]|位置在|在.{1,4}吗|which district|"
        r"\bwhere(?:'s| is| are)\b",
        "district",
    ),
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
    r"就这么订|这么订|可|那也行|也行|那也可以|也可以|那也成|给我订上|帮我订上|给我订|订上|就订上|"
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
# a request said negated: 不订酒店了 / 酒店先不订 / 机票不用订了 (no request, a no)
NEGATED_REQUEST = re.compile(
    r"(先|那|就|我|那就|那我)?(酒店|机票|火车票|车票|高铁票|房间|宾馆|飞机票)?(先|就|暂时|也)?"
    r"(不|别|不用|不必|不需要|甭)(再)?(订|预订|预定|买|要|查)(了)?(酒店|机票|火车票|车票|高铁票|房间|宾馆|飞机票)?(了|啦|吧|呢)?"
)
CORRECTION = re.compile(r"(不对|不是|错了|说错|搞错)")
# a question that checks rather than agrees (确定吗 / 对吧 / 好不好 / is that right?): never a yes (a yes books)
ASKS = re.compile(
    r"([吗么][\s。.~～]*$|(好|行|可|对|是|确定|确认|要|订)不(好|行|可|对|是|确定|确认|要|订)|(确定|确认|行|好|可以|对)不$|"
    r"(对|是|没错|没问题|没搞错|是这个|是这样)吧$|真的|没搞错|^(is|are|am|was|does|did|can|could|should|would|shall|"
    r"really)\b|you sure)",
    re.I,
)


# asking for another option (有没有更便宜的 / 还有别的吗 / 能不能换): after a yes, the yes is withdrawn
OTHER_OPTION = re.compile(r"(有没有|还有没有|有别的|还有别的|能不能|能否|可不可以|可以.{0,6}吗|行不行|要不要)")
RESERVATION = re.compile(r"^\s*(不过|但是|可是|只是|就是说|but\b|however)")
# 第二个 / 换第三趟 / the second one: an ordinal picking one of the offers listed before the read-back
ORDINAL = re.compile(
    rf"第\s*({NUM})\s*(?:个|趟|班|家|张)|^(?:换|就|要|订|选)?\s*第\s*({NUM})\s*(?:吧|的)?$|"
    r"\b(?:the\s+)?(first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th)\s+(?:one|option)\b",
    re.I,
)
# cancelling a booking already made: a cancel verb and a word pointing at something booked
CANCEL = re.compile(r"(取消|退掉|退了|退票|退订|退机票|退火车票|撤销|不要了|\bcancel)", re.I)
BOOKED_MARK = re.compile(
    r"(订单|这单|那单|这一单|订好的|订了的|已订|已经订|刚订|刚才订|之前订|前面订|订的|预订|那张|那间|那家|票|酒店|宾馆|房间|航班|飞机|火车|高铁|动车|"
    r"booking|reservation|order|ticket|hotel|flight|train)",
    re.I,
)
# changing a booking already made (改签): 改签/改期, or a change verb with a word for something booked
REBOOK = re.compile(
    r"(改签|改期|\brebook|change my (booking|ticket|flight|train)|"
    r"\b(change|modify|amend|move|switch|update)\s+(my |the |that |this )?(booking|reservation|order)\s*"
    r"(no\.?\s*|number\s*)?\d+)",
    re.I,
)
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
    (r"(更晚|(?<!经常|总是|老是|常常|容易)(?<![会要])晚(一)?点(?!了|吗|啊)|晚些|迟(一)?点|later one|a later)", "later"),
)
RELATIVE_FEATURE = {"cheaper": "cheapest", "pricier": "most_expensive", "earlier": "earliest", "later": "latest"}
FILLER = re.compile(
    r"^(嗯+|额+|呃+|那个|就是|啊|哦|噢|唔|那(?!一?天)|然后|请问|麻烦|帮我|我想问下|我想问一下|顺便|对了|另外|先|不过|但是|可是)+"
)  # (那天 is a day, not 那 + 天)
CONNECTIVES = re.compile(r"(然后|顺便|对了|另外|还有就是|再帮我|再订|再给我|也帮我|and also|and i also| and )")
CHANGE_CUES = r"(目的地|出发地|改成|换成|改到|换到|去|到|飞|回|票|车|机|actually|instead|change|mean)"
# asking whether there really is none (一班都没有吗？ / 真的没有吗): a question about the search just made
NONE_ASKED = re.compile(
    r"(一[个班趟家间张列]都没有|都没有|真的?没有|确实没有|就没有|全都没有|完全没有|一点都没有|都没了)"
)
# "if X cannot be had, Y": 五星没有的话四星也行 / 上午没有就下午吧 / 要是没有直飞的话
# a fallback: 五星没有的话四星也行 (``pre`` is what fails) / 下午没商务座的话一等座也行 (``what`` fails, ``pre`` holds)
FALLBACK = re.compile(
    r"^(?P<pre>.{0,12}?)(?:没有?|没了|满了|订不到|买不到|不行)(?P<what>[^，,。的]{0,6}?)(?:的话就?|就)(?!算)"
)
SAME_DAY = re.compile(r"(同一天|同一日|同天|当天|那一天|那天|same day)", re.I)
DATE_SHIFT = re.compile(rf"(提前|早|推迟|推后|延后|往后推|往后|晚|改晚|往前)\s*({NUM})\s*天")
