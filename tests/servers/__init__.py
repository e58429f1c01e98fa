"""Loopback test servers (HAPI, CDAS REST) that speak real HTTP on 127.0.0.1.

Imports nothing from xhelio, so the servers are independent peers of the clients they test.
"""
