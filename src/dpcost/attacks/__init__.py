"""Attacks on released estimates: the score attack of Cai, Wang & Zhang (``score``, ``prop21``), and per-target
attacks — informed reconstruction (``reconstruction``) and LiRA-style membership inference (``targeted``)."""
