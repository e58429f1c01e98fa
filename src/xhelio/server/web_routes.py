"""API routes only the web app needs (placeholder until the server's internals are known)."""

from __future__ import annotations

from fastapi import APIRouter

__all__ = ["router"]

router = APIRouter(prefix="/api/v1")
