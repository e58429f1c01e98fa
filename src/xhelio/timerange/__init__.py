"""Time: the one grammar both modes read times with.

`grammar` holds the `TimeRange` value and `parse_time_range` / `find_time_range`
for a time expression on its own; `sentences` reads the time of a whole request
(`find_time`): day-of-year ranges, clock ranges (across midnight too), named events from
the vocabulary (an unknown event name is asked about), and impossible dates as errors;
`relative` the windows measured from a time ("18 h before shock arrival at T", "± N days
around the CME on T"); `near` a date without its year beside a range already known
("extend it through 16 July"); `readable` says ranges as people write them.
Imports only `errors` and `vocabulary`.
"""

from xhelio.timerange.grammar import (
    TimeInText,
    TimeRange,
    find_time_range,
    format_time,
    parse_time_range,
    readable_text,
)
from xhelio.timerange.near import find_time_near, names_time_near
from xhelio.timerange.readable import (
    parse_instant,
    readable_iso_ranges,
    readable_iso_span,
    readable_range,
    readable_span,
)
from xhelio.timerange.relative import unread_time_words
from xhelio.timerange.sentences import TimeFound, clock_range_on, find_time, stray_clocks

__all__ = [
    "TimeFound",
    "TimeInText",
    "TimeRange",
    "clock_range_on",
    "find_time",
    "find_time_near",
    "find_time_range",
    "format_time",
    "names_time_near",
    "parse_instant",
    "parse_time_range",
    "readable_iso_ranges",
    "readable_iso_span",
    "readable_range",
    "readable_span",
    "readable_text",
    "stray_clocks",
    "unread_time_words",
]
