"""Seed gazetteer for the generated databases: cities, airports, railway stations, hotel districts.

Invented for ragdial (real city names, plausible but not real timetables). ``dbgen`` writes these into the
database; the slot parser reads the gazetteer back from the database, never from here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class City:
    """One city: Chinese and English names, airports (empty = no airport), railway stations, hotel districts."""

    name: str
    name_en: str
    airports: tuple[str, ...]
    stations: tuple[str, ...]
    districts: tuple[str, ...]
    lon: float
    lat: float
    aliases: tuple[str, ...] = ()


CITIES: tuple[City, ...] = (
    City(
        "北京",
        "Beijing",
        ("首都机场", "大兴机场"),
        ("北京站", "北京南站", "北京西站"),
        ("朝阳", "海淀", "东城"),
        116.4,
        39.9,
        ("京",),
    ),
    City(
        "上海",
        "Shanghai",
        ("浦东机场", "虹桥机场"),
        ("上海站", "上海虹桥站"),
        ("浦东", "静安", "徐汇"),
        121.5,
        31.2,
        ("沪", "魔都"),
    ),
    City("广州", "Guangzhou", ("白云机场",), ("广州南站", "广州站"), ("天河", "越秀"), 113.3, 23.1, ("羊城",)),
    City("深圳", "Shenzhen", ("宝安机场",), ("深圳北站",), ("南山", "福田"), 114.1, 22.5, ("鹏城",)),
    City("杭州", "Hangzhou", ("萧山机场",), ("杭州东站",), ("西湖", "滨江"), 120.2, 30.3, ()),
    City("南京", "Nanjing", ("禄口机场",), ("南京南站", "南京站"), ("鼓楼", "玄武"), 118.8, 32.1, ("金陵",)),
    City("苏州", "Suzhou", (), ("苏州站", "苏州北站"), ("姑苏", "工业园区"), 120.6, 31.3, ()),
    City("成都", "Chengdu", ("双流机场", "天府机场"), ("成都东站",), ("锦江", "武侯"), 104.1, 30.7, ("蓉城",)),
    City("重庆", "Chongqing", ("江北机场",), ("重庆北站", "重庆西站"), ("渝中", "江北"), 106.5, 29.6, ("山城",)),
    City("西安", "Xi'an", ("咸阳机场",), ("西安北站",), ("雁塔", "碑林"), 108.9, 34.3, ("长安",)),
    City("武汉", "Wuhan", ("天河机场",), ("武汉站", "汉口站"), ("江汉", "武昌"), 114.3, 30.6, ("江城",)),
    City("长沙", "Changsha", ("黄花机场",), ("长沙南站",), ("芙蓉", "岳麓"), 113.0, 28.2, ()),
    City("郑州", "Zhengzhou", ("新郑机场",), ("郑州东站",), ("金水", "二七"), 113.6, 34.7, ()),
    City("天津", "Tianjin", ("滨海机场",), ("天津站", "天津西站"), ("和平", "河西"), 117.2, 39.1, ()),
    City("哈尔滨", "Harbin", ("太平机场",), ("哈尔滨西站", "哈尔滨站"), ("道里", "南岗"), 126.6, 45.8, ("冰城",)),
    City("沈阳", "Shenyang", ("桃仙机场",), ("沈阳北站",), ("和平", "沈河"), 123.4, 41.8, ()),
    City("青岛", "Qingdao", ("胶东机场",), ("青岛北站",), ("市南", "崂山"), 120.4, 36.1, ()),
    City("厦门", "Xiamen", ("高崎机场",), ("厦门北站",), ("思明", "湖里"), 118.1, 24.5, ("鹭岛",)),
    City("昆明", "Kunming", ("长水机场",), ("昆明南站",), ("五华", "盘龙"), 102.7, 25.0, ("春城",)),
    City("桂林", "Guilin", ("两江机场",), ("桂林北站",), ("秀峰", "象山"), 110.3, 25.3, ()),
    City("无锡", "Wuxi", (), ("无锡站", "无锡东站"), ("梁溪", "滨湖"), 120.3, 31.5, ()),
    City("拉萨", "Lhasa", ("贡嘎机场",), (), ("城关",), 91.1, 29.7, ()),
)

AIRLINES: tuple[tuple[str, str], ...] = (
    ("CA", "国航"),
    ("MU", "东航"),
    ("CZ", "南航"),
    ("HU", "海航"),
    ("3U", "川航"),
    ("ZH", "深航"),
)

HOTEL_BRANDS: tuple[tuple[str, int], ...] = (
    ("如家快捷酒店", 2),
    ("汉庭酒店", 2),
    ("锦江之星", 2),
    ("全季酒店", 3),
    ("亚朵酒店", 3),
    ("维也纳酒店", 3),
    ("桔子水晶酒店", 4),
    ("美居酒店", 4),
    ("皇冠假日酒店", 5),
    ("万豪酒店", 5),
    ("希尔顿酒店", 5),
    ("洲际酒店", 5),
)

# other Chinese cities and resorts a traveller may name, none of them in the generated database: a request naming
# one is told the city is not served (and which are) instead of being searched elsewhere or asked again
OTHER_CITIES: tuple[str, ...] = (
    "三亚", "海口", "大连", "济南", "福州", "南昌", "合肥", "太原", "石家庄", "呼和浩特", "兰州", "银川", "西宁",
    "乌鲁木齐", "贵阳", "南宁", "珠海", "宁波", "温州", "烟台", "威海", "洛阳", "丽江", "大理", "张家界", "黄山",
    "西双版纳", "长春", "吉林", "大同", "泉州", "汕头", "佛山", "东莞", "常州", "扬州", "绍兴", "嘉兴", "台州",
    "秦皇岛", "北海", "延吉", "漠河", "喀什", "敦煌", "香港", "澳门", "台北",
)  # fmt: skip
