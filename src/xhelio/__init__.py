"""xhelio: talk to NASA heliophysics data in plain language.

Importing xhelio never touches the network.
"""

__version__ = "0.1.0"
