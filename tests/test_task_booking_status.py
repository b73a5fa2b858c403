"""The bookings table tells live orders from cancelled and changed ones by itself (a ``status`` column, with
``changed_into`` for a change), and a database made before the column existed is brought up to date on opening."""

from __future__ import annotations

import sqlite3

from ragdial.task.db import TravelDB
from task_dialogs import small_travel_db

OLD_BOOKINGS = """
DROP TABLE bookings;
CREATE TABLE bookings (id INTEGER PRIMARY KEY, domain TEXT NOT NULL, item_id INTEGER NOT NULL,
    date TEXT NOT NULL, summary TEXT NOT NULL);
CREATE TABLE cancellations (booking_id INTEGER PRIMARY KEY REFERENCES bookings(id));
INSERT INTO bookings VALUES (1, 'train', 5, '2026-12-02', 'kept');
INSERT INTO bookings VALUES (2, 'train', 6, '2026-12-02', 'cancelled before');
INSERT INTO cancellations VALUES (2);
"""


def _train(db: TravelDB, offset: int = 0) -> dict:
    return db.search("train", {"date": "2026-12-02"}, limit=10)[offset]


def test_status_quantity_and_nights_are_in_the_bookings_table(tmp_path):
    db = TravelDB(small_travel_db(tmp_path))
    train = _train(db)
    kept = db.book("train", train, train["date"], "kept", quantity=2)
    gone = db.book("train", train, train["date"], "gone")
    assert kept and gone and db.cancel(gone)
    hotel = db.search("hotel", {"date": "2026-12-02", "nights": 2}, limit=1)[0]
    stay = db.book("hotel", hotel, "2026-12-02", "stay", quantity=1, nights=2)
    assert stay
    moved = db.rebook(stay, "hotel", hotel, "2026-12-02", "longer", quantity=1, nights=3)
    assert moved is not None
    rows = {
        row[0]: row[1:]
        for row in db.conn.execute("SELECT id, status, changed_into, quantity, nights FROM bookings ORDER BY id")
    }
    assert rows[kept] == ("booked", None, 2, 1)
    assert rows[gone] == ("cancelled", None, 1, 1)
    assert rows[stay] == ("changed", moved, 1, 2)
    assert rows[moved] == ("booked", None, 1, 3)
    db.close()


def test_a_longer_stay_in_the_same_hotel_keeps_its_own_rooms(tmp_path):
    """Extending a stay when the hotel has exactly the booked rooms left: the nights already held are not taken
    twice, and when the extra night is full nothing changes at all."""
    db = TravelDB(small_travel_db(tmp_path))
    hotel = db.search("hotel", {"date": "2026-12-02", "nights": 2}, limit=1)[0]
    number = db.book("hotel", hotel, "2026-12-02", "one night")
    assert number
    db.conn.execute("UPDATE hotel_rooms SET rooms = 0 WHERE hotel_id = ? AND date = '2026-12-02'", (hotel["id"],))
    db.conn.commit()
    longer = db.rebook(number, "hotel", hotel, "2026-12-02", "two nights", nights=2)
    assert longer is not None and db.rooms_free(hotel["id"], "2026-12-02") == 0
    db.conn.execute("UPDATE hotel_rooms SET rooms = 0 WHERE hotel_id = ? AND date = '2026-12-04'", (hotel["id"],))
    db.conn.commit()
    before = list(db.conn.execute("SELECT date, rooms FROM hotel_rooms WHERE hotel_id = ?", (hotel["id"],)))
    assert db.rebook(longer, "hotel", hotel, "2026-12-02", "three nights", nights=3) is None
    after = list(db.conn.execute("SELECT date, rooms FROM hotel_rooms WHERE hotel_id = ?", (hotel["id"],)))
    assert [tuple(r) for r in after] == [tuple(r) for r in before] and db.booking(longer)["status"] == "booked"
    db.close()


def test_a_database_from_before_the_status_column_is_migrated(tmp_path):
    path = small_travel_db(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_BOOKINGS)
    db = TravelDB(path)
    assert db.booking(1)["status"] == "booked" and db.booking(2)["status"] == "cancelled"
    assert not db.cancel(2)  # cancelled before the migration: still cancelled
    assert db.cancel(1) and db.booking(1)["status"] == "cancelled"
    db.close()
    with sqlite3.connect(path) as conn:  # the migration is in the file: a plain query tells live from cancelled
        assert conn.execute("SELECT COUNT(*) FROM bookings WHERE status = 'booked'").fetchone()[0] == 0
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "cancellations" not in names
    TravelDB(path).close()  # opening it again changes nothing
